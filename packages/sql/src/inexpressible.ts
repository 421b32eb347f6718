import type { Span } from "@vigil/diagnostics";

/**
 * A construct the dialect cannot express exactly: the rule is left out of the SQL with a located
 * S0001 carrying this message and help, and is decided by another engine.
 */
export class Inexpressible extends Error {
  constructor(
    message: string,
    readonly span: Span,
    readonly help: string,
  ) {
    super(message);
  }
}
