/**
 * The host a SOCKS5 CONNECT names to ask the proxy's SOCKS port what it is: granted, then the same
 * JSON, then closed. `.invalid` is reserved: no real destination has it.
 */
export const EGRESS_IDENTITY_HOST = "vigil-egress.invalid";

/**
 * The path at which Vigil's egress proxy says what it is (`{vigil: "egress", database, pid}`), at
 * `GET` on its HTTP port, a request no proxy client makes: so that whoever starts it, and the hook
 * before each shell call, can tell it from another program listening on its port. Apart from the
 * proxy (`egress.ts`), so that the hook does not load the proxy to ask.
 */
export const EGRESS_IDENTITY_PATH = "/.well-known/vigil-egress";
