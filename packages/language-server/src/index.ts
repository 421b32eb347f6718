/**
 * The Vigil language server as a library: `startServer(connection, options)` serves LSP on a
 * connection made by `vscode-languageserver` (the `vigil-language-server` command does this over
 * stdio), and the types of the server's own protocol (`vigil/checkTrace`, `vigil/signature`,
 * `vigil/status`, the command `vigil.runTest`).
 */
export { startServer, type ServerOptions } from "./lsp/server.js";
export * from "./protocol.js";
