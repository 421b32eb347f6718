import { createRequire } from "node:module";
import type MvdanSh from "mvdan-sh";

/**
 * mvdan/sh (a Go program compiled to 1.5 MB of JavaScript) is loaded when the first command line
 * is parsed, not when this module is imported: loading it takes a few hundred milliseconds, which a
 * process that never grounds a shell call (a hook deciding a file read) should not pay.
 */
let loaded: typeof MvdanSh.syntax | undefined;
export function shellSyntax(): typeof MvdanSh.syntax {
  loaded ??= (createRequire(import.meta.url)("mvdan-sh") as typeof MvdanSh).syntax;
  return loaded;
}

// The AST nodes are GopherJS objects; these are the fields the line's reading uses.
export interface Word {
  Parts: Part[];
  Pos(): { Offset(): number };
  End(): { Offset(): number };
}
export interface Part {
  Value?: string;
  /** `$'…'` (ANSI-C quoting) for a single-quoted part. */
  Dollar?: boolean;
  Parts?: Part[];
  Pos(): { Offset(): number };
  End(): { Offset(): number };
}
export interface CallExpr {
  Args: Word[];
  Assigns: { Name: { Value: string } | null; Value: Word | null; Append?: boolean; Pos(): { Offset(): number }; End(): { Offset(): number } }[];
  Pos(): { Offset(): number };
}
export interface BinaryCmd {
  OpPos: { Offset(): number };
  X: Stmt;
  Y: Stmt;
}
export interface Stmt {
  Cmd: unknown;
  Pos(): { Offset(): number };
  End(): { Offset(): number };
  Redirs: { Word: Word | null; Hdoc: (Word & { End(): { Offset(): number } }) | null; Pos(): { Offset(): number } }[];
}
export interface CompoundNode {
  Stmts: Stmt[];
}
export interface IfNode {
  Cond: Stmt[];
  Then: Stmt[];
  Else: IfNode | null;
}
