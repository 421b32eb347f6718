/**
 * The words of a parsed line as the values they give a variable, for the judgement of text the
 * shell evaluates (see evaluated.ts): a literal is text, an arithmetic expansion or a program that
 * prints only numbers is a number, `$y` is the value of `y`, and anything else is not known.
 */

// The AST nodes of mvdan/sh (GopherJS objects): the fields read here.
export interface Position {
  Offset(): number;
}
export interface Node {
  Pos(): Position;
  End(): Position;
}
export interface Lit extends Node {
  Value: string;
}
export interface WordNode extends Node {
  Parts: Node[];
}
export interface ParamExpNode extends Node {
  Short: boolean;
  Excl: boolean;
  Length: boolean;
  Param: Lit | null;
  Index: Node | null;
  Slice: { Offset: Node | null; Length: Node | null } | null;
  Repl: unknown;
  Names: number;
  Exp: { Word: WordNode | null } | null;
}
export interface AssignNode extends Node {
  Naked: boolean;
  Append: boolean;
  Name: Lit | null;
  Index: Node | null;
  Value: WordNode | null;
  Array: { Elems: { Index: Node | null; Value: WordNode | null }[] } | null;
}
export interface CallNode extends Node {
  Assigns: AssignNode[];
  Args: WordNode[];
}
export interface Syntax {
  NodeType(node: never): string;
}

/** What the line may put in a variable. */
export type Value =
  | { readonly kind: "number" }
  | { readonly kind: "text"; readonly text: string }
  /** The value of another variable (`x=$y`), or else a default (`x=${y:-3}`). */
  | { readonly kind: "name"; readonly name: string; readonly otherwise?: Value }
  | { readonly kind: "unknown"; readonly why: string };

export const NUMBER: Value = { kind: "number" };

/** Reads words of one line, whose text is `source`. */
export class EvaluatedWords {
  /** Command substitutions by their offset: whether they print only numbers (filled in by the collector's walk). */
  readonly numeric = new Map<number, boolean>();

  constructor(
    readonly source: string,
    private readonly syntax: Syntax,
  ) {}

  type(node: unknown): string {
    return this.syntax.NodeType(node as never);
  }

  text(node: Node): string {
    return this.source.slice(node.Pos().Offset(), node.End().Offset());
  }

  /** The operator of `${x OP word}` as written (`:-`, `@P`, `/`), or undefined for a plain one. */
  operator(expansion: ParamExpNode): string | undefined {
    if (expansion.Exp === null) return expansion.Repl !== null && expansion.Repl !== undefined ? "/" : undefined;
    const start = expansion.Index !== null ? expansion.Index.End().Offset() + 1 : (expansion.Param?.End().Offset() ?? expansion.Pos().Offset());
    const end = expansion.Exp.Word !== null ? expansion.Exp.Word.Pos().Offset() : expansion.End().Offset() - 1;
    const operator = this.source.slice(start, end).trim();
    // `${x@P}`: the parser keeps the letter after `@` as the operator's word.
    return operator === "@" && expansion.Exp.Word !== null ? `@${this.text(expansion.Exp.Word)}` : operator;
  }

  /** The literal text a word's parts start with, up to the first expansion. */
  leadingLiteral(parts: readonly Node[]): string {
    let text = "";
    for (const part of parts) {
      const type = this.type(part);
      if (type === "Lit") text += (part as Lit).Value.replace(/\\(.)/g, "$1");
      else if (type === "SglQuoted" && !(part as Node & { Dollar: boolean }).Dollar) text += (part as Node & { Value: string }).Value;
      else break;
    }
    return text;
  }

  /** What a word assigns, as far as the line shows it. */
  wordValue(word: WordNode): Value {
    const literal = this.literal(word);
    if (literal !== undefined) return { kind: "text", text: literal };
    const parts = word.Parts.length === 1 && this.type(word.Parts[0]) === "DblQuoted" ? ((word.Parts[0] as unknown as { Parts: Node[] }).Parts ?? []) : word.Parts;
    if (parts.length !== 1) return { kind: "unknown", why: `\`${this.text(word).slice(0, 80)}\` is put together when it runs` };
    const part = parts[0]!;
    switch (this.type(part)) {
      case "ArithmExp":
        return NUMBER;
      case "CmdSubst":
        return this.numeric.get(part.Pos().Offset()) === true ? NUMBER : { kind: "unknown", why: `it holds the output of \`${this.text(part).slice(0, 80)}\`` };
      case "ParamExp": {
        const expansion = part as ParamExpNode;
        const name = expansion.Param?.Value ?? "";
        if (expansion.Length || /^[#?$!]$/.test(name)) return NUMBER;
        const operator = this.operator(expansion);
        if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !expansion.Excl && expansion.Slice === null && expansion.Index === null) {
          if (operator === undefined) return { kind: "name", name };
          if (["-", ":-", "=", ":=", "?", ":?"].includes(operator)) {
            const word = expansion.Exp?.Word ?? null;
            return { kind: "name", name, otherwise: word !== null ? this.wordValue(word) : { kind: "text", text: "" } };
          }
        }
        return { kind: "unknown", why: `it holds \`${this.text(part).slice(0, 80)}\`` };
      }
      default:
        return { kind: "unknown", why: `it holds \`${this.text(part).slice(0, 80)}\`` };
    }
  }

  /** What an assignment (`x=word`, `x+=word`, `x=(a b)`) gives its variable. */
  assignedValue(assign: AssignNode): Value {
    const value = assign.Array !== null ? this.arrayValue(assign.Array) : assign.Value !== null ? this.wordValue(assign.Value) : ({ kind: "text", text: "" } as Value);
    return assign.Append ? this.appended(value) : value;
  }

  /** What the words of `for x in WORDS` give x: `{1..9}` and numbers' programs give numbers. */
  itemValue(word: WordNode): Value {
    const text = this.text(word);
    if (/^\{-?[0-9]+\.\.-?[0-9]+(\.\.-?[0-9]+)?\}$/.test(text)) return NUMBER;
    const value = this.wordValue(word);
    // Unquoted, a word may also be split and matched as a pattern: a pattern's names are not known.
    if (value.kind === "text" && /[*?[{]/.test(text) && this.literal(word) === text) return { kind: "unknown", why: `\`${text.slice(0, 80)}\` may match any file's name` };
    return value;
  }

  private arrayValue(array: { Elems: { Value: WordNode | null }[] }): Value {
    const values = array.Elems.map((element) => (element.Value !== null ? this.wordValue(element.Value) : ({ kind: "text", text: "" } as Value)));
    const unknown = values.find((value) => value.kind === "unknown");
    if (unknown !== undefined) return unknown;
    if (values.every((value) => value.kind === "number")) return NUMBER;
    const texts = values.filter((value): value is { kind: "text"; text: string } => value.kind === "text");
    if (texts.length === values.length) return { kind: "text", text: texts.map((value) => value.text).join(" ") };
    return { kind: "unknown", why: "an array of values put together when it runs" };
  }

  /** `x+=word`: text joined to text may make a new name; only numbers stay known. */
  private appended(value: Value): Value {
    return value.kind === "number" || (value.kind === "text" && /^[0-9]*$/.test(value.text)) ? value : { kind: "unknown", why: "it is appended to" };
  }

  /** The text of a word without expansions (quotes removed), or undefined. */
  literal(word: WordNode): string | undefined {
    let text = "";
    for (const part of word.Parts) {
      const type = this.type(part);
      if (type === "Lit") text += (part as Lit).Value.replace(/\\\n/g, "").replace(/\\(.)/g, "$1");
      else if (type === "SglQuoted") {
        const quoted = part as Node & { Value: string; Dollar: boolean };
        if (quoted.Dollar) return undefined;
        text += quoted.Value;
      } else if (type === "DblQuoted") {
        for (const inner of (part as unknown as { Parts: Node[] }).Parts ?? []) {
          if (this.type(inner) !== "Lit") return undefined;
          text += (inner as Lit).Value.replace(/\\([$`"\\\n])/g, "$1");
        }
      } else return undefined;
    }
    return text;
  }

  plain(expansion: ParamExpNode): boolean {
    return expansion.Exp === null && !expansion.Excl && !expansion.Length && expansion.Index === null && expansion.Slice === null && (expansion.Repl === null || expansion.Repl === undefined) && /^[A-Za-z_][A-Za-z0-9_]*$/.test(expansion.Param?.Value ?? "");
  }
}
