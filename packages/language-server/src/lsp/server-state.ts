import { ErrorCodes, ResponseError, TextDocuments, type ClientCapabilities, type Connection, type TextDocumentIdentifier } from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { Workspace } from "../workspace/workspace.js";

/**
 * What every part of the server shares: the connection, the open documents, the workspace, and
 * what the client said in `initialize` (its capabilities, the pause before a check, where the
 * documentation is). The server's parts (document checks, workspace sync, the custom requests) are
 * each given this one object; only `initialize` changes what the client said.
 */
export class ServerState {
  readonly documents = new TextDocuments(TextDocument);
  readonly workspace = new Workspace();
  capabilities: ClientCapabilities = {};
  /** Milliseconds to wait after a change before checking the document again (`initializationOptions.diagnosticsDelay`). */
  diagnosticsDelayMs = 20;
  /** The documentation folder that diagnostic codes link into. */
  documentation: string | undefined;

  constructor(
    readonly connection: Connection,
    documentation: string | undefined,
  ) {
    this.documentation = documentation;
  }

  /** The open document a request is about; a request about anything else is answered with an error. */
  documentOf(params: { textDocument?: TextDocumentIdentifier } | undefined): TextDocument {
    const uri = params?.textDocument?.uri;
    if (typeof uri !== "string") throw new ResponseError(ErrorCodes.InvalidParams, "the request names no document (`textDocument.uri`)");
    const document = this.documents.get(uri);
    if (document === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `unknown document ${uri}: it is not open`);
    return document;
  }

  /** Where each code is explained: a test file's codes (V2xxx) in testing.md, the others in language.md. */
  codeLink(): ((code: string) => string | undefined) | undefined {
    const base = this.documentation;
    if (base === undefined) return undefined;
    return (code) => `${base.replace(/\/+$/, "")}/${/^V2\d{3}$/.test(code) ? "testing" : "language"}.md#diagnostics`;
  }

  logError(what: string, error: unknown): void {
    this.connection.console.error(`${what}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
}
