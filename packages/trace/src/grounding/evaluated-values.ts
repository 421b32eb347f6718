import { promptSafe, type EvaluatedAs } from "./evaluated.js";
import { NUMBER, type EvaluatedWords, type Lit, type Node, type ParamExpNode, type Value, type WordNode } from "./evaluated-words.js";

/**
 * The values a line gives its variables, and the judgement of a value where the line evaluates it
 * (the rule in evaluated.ts): harmless, decided by the environment's value of some names, or not
 * known.
 */

/** Bash's own variables that always hold a number (unless the line assigns them). */
const NUMERIC_VARIABLES = new Set(["RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "EPOCHSECONDS", "BASH_SUBSHELL", "HISTCMD", "OPTIND", "SHLVL", "PIPESTATUS"]);

interface Assignment {
  /** Where the assignment ends: it is done for what the line's text shows after it. */
  readonly end: number;
  /** What it assigns, once the whole line is read (a command substitution in it is read after it). */
  readonly value: () => Value;
  /** The word assigned, when a `declare -i` of the name makes its value an arithmetic expression. */
  readonly word?: WordNode;
  /** The command that assigns it otherwise (`read NAME`), whose input a `declare -i` evaluates too. */
  readonly command?: Node;
}

/** What one construct's check found: values not known, and names whose environment value decides. */
export class Verdict {
  why: string | undefined;
  readonly environment = new Map<string, EvaluatedAs>();
  unknown(why: string): void {
    this.why ??= why;
  }
  outside(name: string, as: EvaluatedAs): void {
    const known = this.environment.get(name);
    // A whole number is harmless however it is evaluated; a name, as a reference or a prompt.
    const strictest = known === "arithmetic" || as === "arithmetic" ? "arithmetic" : known === "reference" || as === "reference" ? "reference" : "prompt";
    this.environment.set(name, strictest);
  }
}

/** How deep values are followed (`x=y; y=z; …`) before one is taken as not known. */
const MAXIMUM_VALUE_DEPTH = 8;

/**
 * What the line assigns to each variable, and where (filled in by the collector's walk); once the
 * whole line is read, it judges a value where the line evaluates it.
 */
export class VariableValues {
  readonly assignments = new Map<string, Assignment[]>();
  /** Where the line runs text or a file that may assign anything (`source`, `.`, `eval`). */
  readonly opaque: number[] = [];
  readonly associative = new Set<string>();
  readonly integers = new Set<string>();

  constructor(private readonly words: EvaluatedWords) {}

  assign(name: string, end: number, value: Value | (() => Value), word?: WordNode, command?: Node): void {
    const list = this.assignments.get(name) ?? [];
    list.push({ end, value: typeof value === "function" ? value : () => value, ...(word !== undefined ? { word } : {}), ...(command !== undefined ? { command } : {}) });
    this.assignments.set(name, list);
  }

  /**
   * A variable's value where `at` evaluates it: every value the line assigns it, and, unless an
   * assignment comes before `at`, the one it has when the line starts (from the environment, or
   * from a file `source`d before, which is not known).
   */
  readName(name: string, as: EvaluatedAs, verdict: Verdict, at: number, depth: number): void {
    if (depth > MAXIMUM_VALUE_DEPTH) {
      verdict.unknown(`the value of \`${name}\` is followed too deep`);
      return;
    }
    const assignments = this.assignments.get(name) ?? [];
    if (assignments.length === 0 && NUMERIC_VARIABLES.has(name)) return;
    for (const assignment of assignments) this.valueSafe(this.integers.has(name) ? NUMBER : assignment.value(), as, verdict, at, depth + 1);
    const before = assignments.filter((assignment) => assignment.end <= at).map((assignment) => assignment.end);
    const last = before.length > 0 ? Math.max(...before) : -1;
    if (this.opaque.some((offset) => offset < at && offset > last)) {
      verdict.unknown(`\`${name}\` may be set by a file or text the line runs (\`source\`, \`eval\`)`);
      return;
    }
    if (before.length === 0) verdict.outside(name, as);
  }

  valueSafe(value: Value, as: EvaluatedAs, verdict: Verdict, at: number, depth: number): void {
    switch (value.kind) {
      case "number":
        return;
      case "unknown":
        verdict.unknown(value.why);
        return;
      case "name":
        this.readName(value.name, as, verdict, at, depth);
        if (value.otherwise !== undefined) this.valueSafe(value.otherwise, as, verdict, at, depth + 1);
        return;
      case "text":
        if (as === "arithmetic") this.arithmeticText(value.text, verdict, at, depth);
        else if (as === "reference") this.referenceText(value.text, verdict, at, depth);
        else if (!promptSafe(value.text)) verdict.unknown(`the prompt \`${value.text.slice(0, 80)}\` holds a substitution`);
        return;
    }
  }

  /** A name with a subscript (`a[i]`), as text: the subscript of an indexed array is arithmetic. */
  referenceText(text: string, verdict: Verdict, at: number, depth: number): void {
    if (/^\s*([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])?\s*$/.test(text)) return;
    const match = /^([A-Za-z_][A-Za-z0-9_]*)\[([\s\S]*)\]$/.exec(text);
    if (match === null) {
      verdict.unknown(`\`${text.slice(0, 80)}\` is not a variable's name`);
      return;
    }
    const subscript = match[2]!;
    if (/[$`]/.test(subscript)) verdict.unknown(`the subscript of \`${text.slice(0, 80)}\` holds an expansion`);
    else if (!this.associative.has(match[1]!)) this.arithmeticText(subscript, verdict, at, depth);
  }

  /** An arithmetic expression (a node of the parser's), evaluated: its names' values and its expansions. */
  arithmetic(node: Node | null, verdict: Verdict, at: number, depth: number): void {
    if (node === null || node === undefined) return;
    const type = this.words.type(node);
    const inner = node as Node & { X?: Node | null; Y?: Node | null };
    switch (type) {
      case "BinaryArithm": {
        const operator = this.words.source.slice(inner.X!.End().Offset(), inner.Y!.Pos().Offset()).trim();
        // `x = …` does not read x (but `x += …` does, and `a[i] = …` evaluates i).
        if (operator === "=") this.assigned(inner.X!, verdict, at, depth);
        else this.arithmetic(inner.X!, verdict, at, depth);
        this.arithmetic(inner.Y!, verdict, at, depth);
        return;
      }
      case "UnaryArithm":
      case "ParenArithm":
        this.arithmetic(inner.X ?? null, verdict, at, depth);
        return;
      case "Word":
        // A name is read where it stands: `(( n = 5, n * 2 ))` reads the n it assigned.
        for (const part of (node as WordNode).Parts) this.arithmeticPart(part, verdict, Math.max(at, node.Pos().Offset()), depth);
        return;
      default:
        this.arithmeticPart(node, verdict, at, depth);
    }
  }

  /** The target of `x = …` in arithmetic: only its subscript is evaluated. */
  private assigned(node: Node, verdict: Verdict, at: number, depth: number): void {
    const parts = this.words.type(node) === "Word" ? (node as WordNode).Parts : [node];
    const only = parts.length === 1 ? parts[0]! : undefined;
    if (only !== undefined && this.words.type(only) === "Lit" && /^[A-Za-z_][A-Za-z0-9_]*$/.test((only as Lit).Value)) return;
    if (only !== undefined && this.words.type(only) === "ParamExp" && (only as ParamExpNode).Exp === null && !(only as ParamExpNode).Excl) {
      const expansion = only as ParamExpNode;
      if (expansion.Index !== null && !this.associative.has(expansion.Param?.Value ?? "")) this.arithmetic(expansion.Index, verdict, at, depth);
      return;
    }
    this.arithmetic(node, verdict, at, depth);
  }

  private arithmeticPart(part: Node, verdict: Verdict, at: number, depth: number): void {
    switch (this.words.type(part)) {
      case "Lit":
        this.arithmeticText((part as Lit).Value, verdict, at, depth);
        return;
      case "SglQuoted": {
        const quoted = part as Node & { Value: string; Dollar: boolean };
        if (quoted.Dollar) verdict.unknown("it holds ANSI-C quoted text");
        else this.arithmeticText(quoted.Value, verdict, at, depth);
        return;
      }
      case "DblQuoted":
        for (const inner of (part as unknown as { Parts: Node[] }).Parts ?? []) this.arithmeticPart(inner, verdict, at, depth);
        return;
      case "ParamExp":
        this.parameterValue(part as ParamExpNode, "arithmetic", verdict, at, depth);
        return;
      case "ArithmExp":
        // A number: its own expression is judged on its own.
        return;
      case "CmdSubst":
        if (this.words.numeric.get(part.Pos().Offset()) !== true) verdict.unknown(`the output of \`${this.words.text(part).slice(0, 80)}\` is evaluated`);
        return;
      default:
        verdict.unknown(`\`${this.words.text(part).slice(0, 80)}\` is evaluated`);
    }
  }

  /**
   * Arithmetic given as text (a value, a quoted `let`): numbers, operators and names, whose values
   * are evaluated in turn. Text the shell did not expand first (`$(…)` in a value) is not known.
   */
  private arithmeticText(text: string, verdict: Verdict, at: number, depth: number): void {
    if (/[$`]/.test(text)) {
      verdict.unknown(`\`${text.slice(0, 80)}\` is evaluated with an expansion in it`);
      return;
    }
    for (const match of text.matchAll(/[0-9][0-9A-Za-z_@#]*|([A-Za-z_][A-Za-z0-9_]*)(?=(\s*=(?!=))?)/g)) {
      const name = match[1];
      // A number (`10`, `0x1f`, `16#ff`), or a name assigned to (`x = 1`).
      if (name === undefined || match[2] !== undefined) continue;
      this.readName(name, "arithmetic", verdict, at, depth + 1);
    }
  }

  /** The value of `$x`, `${x}`, `${x:-word}`, `${a[i]}`, `${#x}`… where it is evaluated. */
  private parameterValue(expansion: ParamExpNode, as: EvaluatedAs, verdict: Verdict, at: number, depth: number): void {
    const name = expansion.Param?.Value ?? "";
    if (expansion.Length) {
      if (expansion.Index !== null && !/^[@*]$/.test(this.words.text(expansion.Index).trim()) && !this.associative.has(name)) this.arithmetic(expansion.Index, verdict, at, depth);
      return;
    }
    if (/^[#?$!]$/.test(name)) return;
    if (/^[0-9@*]$/.test(name)) {
      verdict.unknown("the positional parameters are evaluated");
      return;
    }
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      verdict.unknown(`\`$${name}\` is evaluated`);
      return;
    }
    if (expansion.Excl || expansion.Slice !== null || (expansion.Repl !== null && expansion.Repl !== undefined)) {
      verdict.unknown(`\`${this.words.text(expansion).slice(0, 80)}\` is evaluated`);
      return;
    }
    if (expansion.Index !== null && !/^[@*]$/.test(this.words.text(expansion.Index).trim()) && !this.associative.has(name)) this.arithmetic(expansion.Index, verdict, at, depth);
    const operator = this.words.operator(expansion);
    const word = expansion.Exp?.Word ?? null;
    if (operator === undefined || ["-", ":-", "=", ":=", "?", ":?"].includes(operator)) {
      this.readName(name, as, verdict, at, depth);
      if (word !== null) this.valueSafe(this.words.wordValue(word), as, verdict, at, depth + 1);
      return;
    }
    if (operator === "+" || operator === ":+") {
      if (word !== null) this.valueSafe(this.words.wordValue(word), as, verdict, at, depth + 1);
      return;
    }
    verdict.unknown(`\`${this.words.text(expansion).slice(0, 80)}\` is evaluated`);
  }
}
