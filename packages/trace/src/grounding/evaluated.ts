/**
 * Text the shell evaluates as code, found in a parsed command line: where Bash takes a value as an
 * arithmetic expression, a prompt string or a variable's name, and where a builtin runs text given
 * to it as a command. Such text can hold a command substitution the line does not show:
 *
 *     x='a[$(rm -rf .vigil)]'; echo $((x))
 *
 * runs `rm`, because Bash evaluates the value of `x` as an arithmetic expression, and the subscript
 * of `a[…]` in it is expanded, `$(…)` included. The same holds for `((…))`, `let`, `$[…]`, the
 * values given to a variable declared `-i`, the subscripts of indexed arrays (`${a[$i]}`,
 * `a[i]=…`), the offsets of `${x:…}`, the operands of `[[ … -eq … ]]`, a name given to `printf -v`,
 * `read`, `test -v`, `unset` or `declare -n` (a subscript in it is evaluated), `${!x}` (the value of
 * `x` is such a name), `${x@P}` and `PS4` under `set -x` (a prompt string: `$(…)` in it runs).
 * `test`, `[` and `printf %d` do not evaluate their operands.
 *
 * The rule: a construct that evaluates is fine when every value it evaluates is known from the line
 * to be harmless; otherwise it is reported. What is harmless:
 *
 * - a number, and what is known to be one: the result of an arithmetic expansion or assignment
 *   (`i=$((i+1))`, `((i++))`, a `for ((…))` loop's variable), `$#`, `$?`, `$$`, `$!`, `${#x}`,
 *   Bash's own numeric variables (`RANDOM`, `SECONDS`, `LINENO`, `UID`, …), the words of `for i in
 *   1 2 3` and `{1..10}`, and the output of a program that prints only numbers (`$(wc -l < f)`,
 *   `$(nproc)`, `$(date +%s)`, `$(seq 1 5)`, `$(grep -c x f)`, `$(git rev-list --count HEAD)`);
 * - a literal the line assigns, itself judged by this rule (`x='1+2'`, `x=y` with `y` harmless);
 *   for a prompt, a literal without a command substitution; for a name, a plain name.
 *
 * A variable's value is every value the line assigns it anywhere (a loop may assign it after the
 * place that reads it), and, where no assignment comes before that place in the line's text, the
 * value it has when the line starts: the shell's environment. That one is not known here, so the
 * construct is reported with the names whose environment value alone decides it
 * (`environment`: a consumer that knows the environment, the guard in the hook, may let it
 * through). A value read at run time (`read`, `mapfile`, a command's output, a file `source`d or
 * text `eval`ed before the place, a positional parameter) is not known: the construct is reported
 * without `environment`.
 *
 * The order of the line's text stands in for the order it runs in; a script nested in the line
 * (`bash -c '…'`) does not see the line's assignments, and its grounding drops `environment`.
 */

/** How a value from the environment is evaluated, which says which values are harmless (see {@link evaluatedValueSafe}). */
export type EvaluatedAs = "arithmetic" | "reference" | "prompt";

/** A construct of the line that evaluates text not known to be harmless. */
export interface EvaluatedText {
  /** The construct, in short: `$((…))`, `let`, `${…@P}`, `set -x`, `mapfile -C`, … */
  readonly by: string;
  /** The construct as written (cut to 200 characters). */
  readonly text: string;
  /** Why its value is not known, when it is not the environment's. */
  readonly why?: string;
  /**
   * When the values of these variables in the shell's environment alone decide it: each name, and
   * how its value is evaluated. Absent: something else is not known.
   */
  readonly environment?: Readonly<Record<string, EvaluatedAs>>;
}

/**
 * Whether an environment variable's value is harmless where it is evaluated: as arithmetic, a
 * whole number (its digits, a base, a sign); as a reference, a plain name or a number; as a
 * prompt, a string without a command or arithmetic substitution. An empty value is harmless.
 */
export function evaluatedValueSafe(as: EvaluatedAs, value: string): boolean {
  if (INTEGER.test(value)) return true;
  if (as === "arithmetic") return false;
  if (as === "reference") return /^\s*[A-Za-z_][A-Za-z0-9_]*\s*$/.test(value);
  return promptSafe(value);
}

const INTEGER = /^\s*[-+]?\s*(0[xX][0-9A-Fa-f]+|[0-9]+(#[0-9A-Za-z@_]+)?)?\s*$/;

/** Bash's own variables that always hold a number (unless the line assigns them). */
const NUMERIC_VARIABLES = new Set(["RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "EPOCHSECONDS", "BASH_SUBSHELL", "HISTCMD", "OPTIND", "SHLVL", "PIPESTATUS"]);

/**
 * A prompt string without a command substitution, an arithmetic expansion or an expansion that
 * evaluates: `$NAME`, `${NAME}`, `${NAME[N]}`, `${#NAME}` and `${NAME:-text}` are fine (a
 * parameter's value is put in, not expanded again), and backslash escapes (`\u`, `\$`).
 */
function promptSafe(text: string): boolean {
  if (text.includes("`")) return false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === "\\") {
      index++;
      continue;
    }
    if (char !== "$") continue;
    const next = text[index + 1];
    if (next === undefined || /[A-Za-z0-9_#?$!*@-]/.test(next) || /\s/.test(next)) continue;
    if (next !== "{") return false;
    const close = text.indexOf("}", index);
    if (close < 0) return false;
    const body = text.slice(index + 2, close);
    if (!/^#?[A-Za-z_][A-Za-z0-9_]*(\[[0-9@*]+\])?(:?[-+=?][^$`{}[\]\\]*)?$|^[0-9#?$!*@-]$/.test(body)) return false;
    index = close;
  }
  return true;
}

// The AST nodes of mvdan/sh (GopherJS objects): the fields read here.
interface Position {
  Offset(): number;
}
interface Node {
  Pos(): Position;
  End(): Position;
}
interface Lit extends Node {
  Value: string;
}
interface WordNode extends Node {
  Parts: Node[];
}
interface ParamExpNode extends Node {
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
interface AssignNode extends Node {
  Naked: boolean;
  Append: boolean;
  Name: Lit | null;
  Index: Node | null;
  Value: WordNode | null;
  Array: { Elems: { Index: Node | null; Value: WordNode | null }[] } | null;
}
interface CallNode extends Node {
  Assigns: AssignNode[];
  Args: WordNode[];
}
interface Syntax {
  NodeType(node: never): string;
}

/** What the line may put in a variable. */
type Value =
  | { readonly kind: "number" }
  | { readonly kind: "text"; readonly text: string }
  /** The value of another variable (`x=$y`), or else a default (`x=${y:-3}`). */
  | { readonly kind: "name"; readonly name: string; readonly otherwise?: Value }
  | { readonly kind: "unknown"; readonly why: string };

const NUMBER: Value = { kind: "number" };

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
class Verdict {
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

interface Site {
  readonly by: string;
  readonly node: Node;
  readonly check: (verdict: Verdict) => void;
}

/** How deep values are followed (`x=y; y=z; …`) before one is taken as not known. */
const MAXIMUM_VALUE_DEPTH = 8;

const ARITHMETIC_TESTS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);
const ASSIGNMENT_OPERATORS = new Set(["=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="]);
const SHELLS = new Set(["bash", "sh", "zsh", "ksh", "dash", "mksh", "yash"]);

/**
 * Collects, node by node as the parser's walk visits them, what the line assigns and where it
 * evaluates text; {@link evaluatedTexts} then judges each place with all the line's assignments known.
 */
export class EvaluationCollector {
  private readonly assignments = new Map<string, Assignment[]>();
  /** Where the line runs text or a file that may assign anything (`source`, `.`, `eval`). */
  private readonly opaque: number[] = [];
  private readonly associative = new Set<string>();
  private readonly integers = new Set<string>();
  private readonly sites: Site[] = [];
  /** Places reported outright (`fc`, `mapfile -C`, an interactive shell), with why. */
  private readonly outright: { by: string; node: Node; why: string }[] = [];
  /** Command substitutions by their offset: whether they print only numbers. */
  private readonly numeric = new Map<number, boolean>();

  constructor(
    private readonly source: string,
    private readonly syntax: Syntax,
  ) {}

  private type(node: unknown): string {
    return this.syntax.NodeType(node as never);
  }

  private text(node: Node): string {
    return this.source.slice(node.Pos().Offset(), node.End().Offset());
  }

  visit(node: unknown, type: string): void {
    const source = this.source;
    switch (type) {
      case "ArithmExp": {
        const arithm = node as Node & { X: Node | null; Bracket: boolean };
        const by = arithm.Bracket ? "$[…]" : "$((…))";
        this.site(by, arithm, (verdict) => this.arithmetic(arithm.X, verdict, arithm.Pos().Offset(), 0));
        return;
      }
      case "ArithmCmd": {
        const arithm = node as Node & { X: Node | null };
        this.site("((…))", arithm, (verdict) => this.arithmetic(arithm.X, verdict, arithm.Pos().Offset(), 0));
        return;
      }
      case "LetClause": {
        const clause = node as Node & { Exprs: Node[] };
        this.site("let", clause, (verdict) => {
          for (const expression of clause.Exprs) this.arithmetic(expression, verdict, clause.Pos().Offset(), 0);
        });
        return;
      }
      case "CStyleLoop": {
        const loop = node as Node & { Init: Node | null; Cond: Node | null; Post: Node | null };
        this.site("for ((…))", loop, (verdict) => {
          for (const part of [loop.Init, loop.Cond, loop.Post]) this.arithmetic(part, verdict, loop.Pos().Offset(), 0);
        });
        return;
      }
      case "BinaryArithm": {
        // `x = …`, `x += …` in any arithmetic: x then holds a number.
        const binary = node as Node & { X: Node; Y: Node };
        const operator = source.slice(binary.X.End().Offset(), binary.Y.Pos().Offset()).trim();
        if (ASSIGNMENT_OPERATORS.has(operator)) {
          const name = this.arithmeticTarget(binary.X);
          if (name !== undefined) this.assign(name, binary.End().Offset(), NUMBER);
        }
        return;
      }
      case "UnaryArithm": {
        const unary = node as Node & { X: Node };
        if (/\+\+|--/.test(this.text(unary).replace(this.text(unary.X), ""))) {
          const name = this.arithmeticTarget(unary.X);
          if (name !== undefined) this.assign(name, unary.End().Offset(), NUMBER);
        }
        return;
      }
      case "ParamExp":
        this.parameter(node as ParamExpNode);
        return;
      case "Assign": {
        const assign = node as AssignNode;
        const name = assign.Name?.Value;
        if (assign.Index !== null && name !== undefined) {
          const index = assign.Index;
          this.site(`${name}[…]=`, assign, (verdict) => {
            if (!this.associative.has(name)) this.arithmetic(index, verdict, assign.Pos().Offset(), 0);
          });
        }
        for (const element of assign.Array?.Elems ?? []) {
          const index = element.Index;
          if (index === null || name === undefined) continue;
          this.site(`${name}=([…]=…)`, assign, (verdict) => {
            if (!this.associative.has(name)) this.arithmetic(index, verdict, assign.Pos().Offset(), 0);
          });
        }
        return;
      }
      case "CallExpr":
        this.call(node as CallNode);
        return;
      case "DeclClause":
        this.declaration(node as Node & { Variant: Lit; Args: AssignNode[] });
        return;
      case "WordIter": {
        // `for x in WORDS`, `select x in WORDS`: x holds each word.
        const iteration = node as Node & { Name: Lit; Items: WordNode[] };
        const end = iteration.Name.End().Offset();
        if (iteration.Items.length === 0) this.assign(iteration.Name.Value, end, { kind: "unknown", why: "the loop's words are the positional parameters" });
        for (const item of iteration.Items) this.assign(iteration.Name.Value, end, () => this.itemValue(item));
        return;
      }
      case "ForClause": {
        const clause = node as Node & { Select: boolean };
        if (clause.Select) this.assign("REPLY", clause.Pos().Offset(), { kind: "unknown", why: "`select` reads it" });
        return;
      }
      case "BinaryTest": {
        const test = node as Node & { X: Node; Y: Node };
        const operator = source.slice(test.X.End().Offset(), test.Y.Pos().Offset()).trim();
        if (ARITHMETIC_TESTS.has(operator)) {
          this.site(`[[ … ${operator} … ]]`, test, (verdict) => {
            this.arithmetic(test.X, verdict, test.Pos().Offset(), 0);
            this.arithmetic(test.Y, verdict, test.Pos().Offset(), 0);
          });
        } else if (operator === "=~") {
          this.assign("BASH_REMATCH", test.End().Offset(), { kind: "unknown", why: "`=~` sets it to what it matched" });
        }
        return;
      }
      case "UnaryTest": {
        const test = node as Node & { X: Node };
        const operator = source.slice(test.Pos().Offset(), test.X.Pos().Offset()).trim();
        if (operator === "-v" || operator === "-R") this.referenceSite(`[[ ${operator} … ]]`, test, test.X as WordNode);
        return;
      }
      case "CmdSubst":
        this.numeric.set((node as Node).Pos().Offset(), this.printsNumbers(node as Node & { Stmts: { Cmd: unknown }[] }));
        return;
      default:
        return;
    }
  }

  /** The constructs that evaluate text not known to be harmless. */
  results(): EvaluatedText[] {
    // A variable declared `-i` takes every value given to it as an arithmetic expression.
    for (const name of this.integers) {
      for (const assignment of this.assignments.get(name) ?? []) {
        const word = assignment.word;
        const command = assignment.command;
        if (word !== undefined) this.site(`declare -i ${name}`, word, (verdict) => this.arithmetic(word, verdict, word.Pos().Offset(), 0));
        else if (command !== undefined) {
          // `declare -i n; read n`: what is read is evaluated.
          this.site(`declare -i ${name}`, command, (verdict) => this.valueSafe(assignment.value(), "arithmetic", verdict, command.Pos().Offset(), 0));
        }
      }
    }
    const found = new Map<string, EvaluatedText>();
    const cut = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);
    for (const { by, node, why } of this.outright) found.set(`${by}\u0000${node.Pos().Offset()}`, { by, text: cut(this.text(node)), why });
    for (const site of this.sites) {
      const verdict = new Verdict();
      site.check(verdict);
      if (verdict.why === undefined && verdict.environment.size === 0) continue;
      const key = `${site.by}\u0000${this.text(site.node)}`;
      if (found.has(key)) continue;
      found.set(key, {
        by: site.by,
        text: cut(this.text(site.node)),
        ...(verdict.why !== undefined ? { why: verdict.why } : { environment: Object.fromEntries(verdict.environment) }),
      });
    }
    return [...found.values()];
  }

  private site(by: string, node: Node, check: (verdict: Verdict) => void): void {
    this.sites.push({ by, node, check });
  }

  private assign(name: string, end: number, value: Value | (() => Value), word?: WordNode, command?: Node): void {
    const list = this.assignments.get(name) ?? [];
    list.push({ end, value: typeof value === "function" ? value : () => value, ...(word !== undefined ? { word } : {}), ...(command !== undefined ? { command } : {}) });
    this.assignments.set(name, list);
  }

  /** The name an arithmetic assignment sets (`x = …`, `a[i] += …`, `x++`). */
  private arithmeticTarget(node: Node): string | undefined {
    if (this.type(node) !== "Word") return undefined;
    const parts = (node as WordNode).Parts;
    if (parts.length !== 1) return undefined;
    const part = parts[0]!;
    const type = this.type(part);
    if (type === "Lit" && /^[A-Za-z_][A-Za-z0-9_]*$/.test((part as Lit).Value)) return (part as Lit).Value;
    if (type === "ParamExp") return (part as ParamExpNode).Param?.Value;
    return undefined;
  }

  private parameter(expansion: ParamExpNode): void {
    const name = expansion.Param?.Value;
    if (name === undefined) return;
    const at = expansion.Pos().Offset();
    const index = expansion.Index;
    if (index !== null && !/^[@*]$/.test(this.text(index).trim())) {
      this.site(`\${${name}[…]}`, expansion, (verdict) => {
        if (!this.associative.has(name)) this.arithmetic(index, verdict, at, 0);
      });
    }
    const slice = expansion.Slice;
    if (slice !== null) {
      this.site(`\${${name}:…}`, expansion, (verdict) => {
        this.arithmetic(slice.Offset, verdict, at, 0);
        this.arithmetic(slice.Length, verdict, at, 0);
      });
    }
    const operator = this.operator(expansion);
    if (operator === "@P") this.site(`\${${name}@P}`, expansion, (verdict) => this.readName(name, "prompt", verdict, at, 0));
    if (expansion.Excl && expansion.Names === 0 && !(index !== null && /^[@*]$/.test(this.text(index).trim()))) {
      this.site(`\${!${name}}`, expansion, (verdict) => this.readName(name, "reference", verdict, at, 0));
    }
    // `${x:=word}`: x is given the word when it is unset (or empty).
    if ((operator === "=" || operator === ":=") && expansion.Exp !== null) {
      const word = expansion.Exp.Word;
      this.assign(name, expansion.End().Offset(), () => (word !== null ? this.wordValue(word) : { kind: "text", text: "" }));
    }
  }

  /** The operator of `${x OP word}` as written (`:-`, `@P`, `/`), or undefined for a plain one. */
  private operator(expansion: ParamExpNode): string | undefined {
    if (expansion.Exp === null) return expansion.Repl !== null && expansion.Repl !== undefined ? "/" : undefined;
    const start = expansion.Index !== null ? expansion.Index.End().Offset() + 1 : (expansion.Param?.End().Offset() ?? expansion.Pos().Offset());
    const end = expansion.Exp.Word !== null ? expansion.Exp.Word.Pos().Offset() : expansion.End().Offset() - 1;
    const operator = this.source.slice(start, end).trim();
    // `${x@P}`: the parser keeps the letter after `@` as the operator's word.
    return operator === "@" && expansion.Exp.Word !== null ? `@${this.text(expansion.Exp.Word)}` : operator;
  }

  private declaration(clause: Node & { Variant: Lit; Args: AssignNode[] }): void {
    const variant = clause.Variant.Value;
    const flags = new Set<string>();
    for (const argument of clause.Args) {
      const flag = argument.Naked && argument.Name === null && argument.Value !== null ? this.literal(argument.Value) : undefined;
      if (flag !== undefined && /^-[A-Za-z]+$/.test(flag)) for (const letter of flag.slice(1)) flags.add(letter);
    }
    if (variant === "nameref") flags.add("n");
    for (const argument of clause.Args) {
      const name = argument.Name?.Value;
      if (name === undefined) {
        const value = argument.Value;
        if (value === null) continue;
        const literal = this.literal(value);
        if (literal !== undefined && /^[-+][A-Za-z]+$/.test(literal)) continue;
        // `declare "$V=1"`, `export 'a[$(…)]=1'`, `export "PATH=$PATH:x"`: a name (and subscript) given as text.
        this.referenceSite(`${variant} NAME=…`, clause, value, true);
        const named = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=/.exec(literal ?? this.leadingLiteral(value.Parts.length === 1 && this.type(value.Parts[0]) === "DblQuoted" ? ((value.Parts[0] as unknown as { Parts: Node[] }).Parts ?? []) : value.Parts));
        if (named !== null) {
          const text = literal;
          this.assign(named[1]!, argument.End().Offset(), text !== undefined ? { kind: "text", text: text.slice(named[0].length) } : { kind: "unknown", why: `\`${this.text(value).slice(0, 80)}\` is put together when it runs` });
        }
        continue;
      }
      if (flags.has("A")) this.associative.add(name);
      if (flags.has("i")) this.integers.add(name);
      if (argument.Naked) continue;
      if (flags.has("n") && argument.Value !== null) {
        // A name reference: its value is a variable's name, subscript included.
        this.referenceSite(`${variant} -n`, argument, argument.Value);
      }
      this.assign(name, argument.End().Offset(), () => this.assignedValue(argument), argument.Value ?? undefined);
    }
  }

  private call(call: CallNode): void {
    if (call.Args.length === 0) {
      for (const assign of call.Assigns) {
        const name = assign.Name?.Value;
        if (name === undefined) continue;
        this.assign(name, assign.End().Offset(), () => this.assignedValue(assign), assign.Value ?? undefined);
      }
      return;
    }
    // `PS4=… bash -x s.sh`: an assignment before a command is in that command's environment.
    for (const assign of call.Assigns) {
      const name = assign.Name?.Value;
      if (name !== undefined) this.assign(name, assign.End().Offset(), () => this.assignedValue(assign));
    }
    const words = call.Args;
    let at = 0;
    while (at < words.length - 1 && ["builtin", "command"].includes(this.literal(words[at]!) ?? "")) at++;
    const name = this.literal(words[at]!);
    if (name === undefined) return;
    const rest = words.slice(at + 1);
    const texts = rest.map((word) => this.literal(word));
    const program = name.replace(/^.*\//, "");
    const unknown = (why: string) => ({ kind: "unknown" as const, why });
    const end = call.End().Offset();
    switch (program) {
      case "source":
      case ".":
      case "eval":
        this.opaque.push(call.Pos().Offset());
        return;
      case "read": {
        const { operands, options } = this.options(rest, "adinNptu");
        for (const word of [...operands, ...(options.get("a") ?? [])]) this.namedBy("read", call, word, unknown("`read` reads it"));
        if (operands.length === 0 && !options.has("a")) this.assign("REPLY", end, unknown("`read` reads it"));
        return;
      }
      case "mapfile":
      case "readarray": {
        const { operands, options } = this.options(rest, "dnOsuCc");
        if (options.has("C")) this.outright.push({ by: `${program} -C`, node: call, why: `\`${program} -C\` runs its callback as a command for the lines it reads` });
        if (operands[0] !== undefined) this.namedBy(program, call, operands[0], unknown(`\`${program}\` reads it`));
        else this.assign("MAPFILE", end, unknown(`\`${program}\` reads it`));
        return;
      }
      case "printf": {
        if (texts[0] === "-v" && rest[1] !== undefined) this.namedBy("printf -v", call, rest[1], unknown("`printf -v` sets it"));
        return;
      }
      case "getopts": {
        if (rest[1] !== undefined) this.namedBy("getopts", call, rest[1], unknown("`getopts` sets it"));
        this.assign("OPTARG", end, unknown("`getopts` sets it"));
        return;
      }
      case "wait": {
        const { options } = this.options(rest, "p");
        for (const word of options.get("p") ?? []) this.namedBy("wait -p", call, word, NUMBER);
        return;
      }
      case "unset":
        for (const word of rest) {
          const text = this.literal(word);
          if (text !== undefined && /^-[fvn]+$/.test(text)) continue;
          this.namedBy("unset", call, word, NUMBER);
        }
        return;
      case "test":
      case "[":
        rest.forEach((word, index) => {
          if (texts[index] === "-v" && rest[index + 1] !== undefined) this.referenceSite(`${program} -v`, call, rest[index + 1]!);
        });
        return;
      case "set":
        if (texts.some((text, index) => (text !== undefined && /^-[A-Za-z]*x[A-Za-z]*$/.test(text)) || (text === "-o" && texts[index + 1] === "xtrace"))) this.xtrace(`${program} -x`, call);
        return;
      case "shopt":
        if (texts.includes("xtrace") && texts.some((text) => text !== undefined && /^-[A-Za-z]*o/.test(text)) && texts.some((text) => text !== undefined && /^-[A-Za-z]*s/.test(text))) this.xtrace("shopt -so xtrace", call);
        return;
      case "fc":
        // `fc` runs commands from the history (`fc -s`, or an editor's text); `fc -l` lists them.
        if (!texts.some((text) => text !== undefined && /^-[A-Za-z]*l/.test(text))) this.outright.push({ by: "fc", node: call, why: "`fc` runs commands from the shell's history" });
        return;
      case "complete":
      case "compgen":
        if (texts.some((text) => text !== undefined && /^-[A-Za-z]*C/.test(text))) this.outright.push({ by: `${program} -C`, node: call, why: `\`${program} -C\` runs a command to complete words` });
        return;
      case "bind":
        if (texts.some((text) => text !== undefined && /^-[A-Za-z]*x/.test(text))) this.outright.push({ by: "bind -x", node: call, why: "`bind -x` binds a key to a command" });
        return;
      default:
        if (SHELLS.has(program)) this.shell(program, call, rest, texts);
        return;
    }
  }

  /** `bash -x …` traces with PS4; `bash -i` without `-c` prompts with PS1 and runs PROMPT_COMMAND. */
  private shell(program: string, call: CallNode, rest: readonly WordNode[], texts: readonly (string | undefined)[]): void {
    const letters = new Set<string>();
    let xtrace = false;
    for (let index = 0; index < rest.length; index++) {
      const text = texts[index];
      if (text === undefined || text === "--" || !/^[-+]/.test(text)) break;
      if (/^[-+][oO]$/.test(text)) {
        if (texts[index + 1] === "xtrace" && text === "-o") xtrace = true;
        index++;
        continue;
      }
      if (text.startsWith("--")) continue;
      if (text.startsWith("-")) for (const letter of text.slice(1)) letters.add(letter);
    }
    // `PS4=… bash -x`: the value before the command is the one the shell it starts gets.
    if (xtrace || letters.has("x")) this.xtrace(`${program} -x`, call, call.End().Offset());
    if (letters.has("i") && !letters.has("c")) {
      this.outright.push({ by: `${program} -i`, node: call, why: "an interactive shell runs PROMPT_COMMAND and expands its prompts (PS0, PS1, PS2) before the commands it reads" });
    }
  }

  /** Tracing (`set -x`): Bash expands PS4, a prompt string, before each command it traces. */
  private xtrace(by: string, call: CallNode, at = call.Pos().Offset()): void {
    this.site(by, call, (verdict) => this.readName("PS4", "prompt", verdict, at, 0));
  }

  /** A name a builtin is given to set (`read NAME`, `printf -v NAME`): a reference, and the variable it sets. */
  private namedBy(by: string, call: CallNode, word: WordNode, value: Value): void {
    this.referenceSite(by, call, word);
    const text = this.literal(word);
    const name = text !== undefined ? /^([A-Za-z_][A-Za-z0-9_]*)/.exec(text)?.[1] : undefined;
    if (name !== undefined) this.assign(name, call.End().Offset(), value, undefined, call);
  }

  /**
   * A word Bash takes as a variable's name, a subscript included (`a[i]`): a literal is judged as
   * such; an expansion by the value it has. `assignment`: the word may be `NAME=VALUE`.
   */
  private referenceSite(by: string, node: Node, word: WordNode, assignment = false): void {
    this.site(by, node, (verdict) => {
      const at = node.Pos().Offset();
      const parts = word.Parts.length === 1 && this.type(word.Parts[0]) === "DblQuoted" ? ((word.Parts[0] as unknown as { Parts: Node[] }).Parts ?? []) : word.Parts;
      if (assignment) {
        // `export "PATH=$PATH:/x"`: the name is the literal text before the `=`.
        const lead = this.leadingLiteral(parts);
        const equals = lead.search(/\+?=/);
        if (equals >= 0) this.referenceText(lead.slice(0, equals), verdict, at, 0);
        else verdict.unknown(`the name in \`${this.text(word).slice(0, 80)}\` is known only when it runs`);
        return;
      }
      const literal = this.literal(word);
      if (literal !== undefined) {
        this.referenceText(literal, verdict, at, 0);
        return;
      }
      const only = parts.length === 1 ? parts[0]! : undefined;
      if (only !== undefined && this.type(only) === "ParamExp" && this.plain(only as ParamExpNode)) {
        this.readName((only as ParamExpNode).Param!.Value, "reference", verdict, at, 0);
        return;
      }
      verdict.unknown(`the name \`${this.text(word).slice(0, 80)}\` is known only when it runs`);
    });
  }

  /** The literal text a word's parts start with, up to the first expansion. */
  private leadingLiteral(parts: readonly Node[]): string {
    let text = "";
    for (const part of parts) {
      const type = this.type(part);
      if (type === "Lit") text += (part as Lit).Value.replace(/\\(.)/g, "$1");
      else if (type === "SglQuoted" && !(part as Node & { Dollar: boolean }).Dollar) text += (part as Node & { Value: string }).Value;
      else break;
    }
    return text;
  }

  /** A name with a subscript (`a[i]`), as text: the subscript of an indexed array is arithmetic. */
  private referenceText(text: string, verdict: Verdict, at: number, depth: number): void {
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
  private arithmetic(node: Node | null, verdict: Verdict, at: number, depth: number): void {
    if (node === null || node === undefined) return;
    const type = this.type(node);
    const inner = node as Node & { X?: Node | null; Y?: Node | null };
    switch (type) {
      case "BinaryArithm": {
        const operator = this.source.slice(inner.X!.End().Offset(), inner.Y!.Pos().Offset()).trim();
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
    const parts = this.type(node) === "Word" ? (node as WordNode).Parts : [node];
    const only = parts.length === 1 ? parts[0]! : undefined;
    if (only !== undefined && this.type(only) === "Lit" && /^[A-Za-z_][A-Za-z0-9_]*$/.test((only as Lit).Value)) return;
    if (only !== undefined && this.type(only) === "ParamExp" && (only as ParamExpNode).Exp === null && !(only as ParamExpNode).Excl) {
      const expansion = only as ParamExpNode;
      if (expansion.Index !== null && !this.associative.has(expansion.Param?.Value ?? "")) this.arithmetic(expansion.Index, verdict, at, depth);
      return;
    }
    this.arithmetic(node, verdict, at, depth);
  }

  private arithmeticPart(part: Node, verdict: Verdict, at: number, depth: number): void {
    switch (this.type(part)) {
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
        if (this.numeric.get(part.Pos().Offset()) !== true) verdict.unknown(`the output of \`${this.text(part).slice(0, 80)}\` is evaluated`);
        return;
      default:
        verdict.unknown(`\`${this.text(part).slice(0, 80)}\` is evaluated`);
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
      if (expansion.Index !== null && !/^[@*]$/.test(this.text(expansion.Index).trim()) && !this.associative.has(name)) this.arithmetic(expansion.Index, verdict, at, depth);
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
      verdict.unknown(`\`${this.text(expansion).slice(0, 80)}\` is evaluated`);
      return;
    }
    if (expansion.Index !== null && !/^[@*]$/.test(this.text(expansion.Index).trim()) && !this.associative.has(name)) this.arithmetic(expansion.Index, verdict, at, depth);
    const operator = this.operator(expansion);
    const word = expansion.Exp?.Word ?? null;
    if (operator === undefined || ["-", ":-", "=", ":=", "?", ":?"].includes(operator)) {
      this.readName(name, as, verdict, at, depth);
      if (word !== null) this.valueSafe(this.wordValue(word), as, verdict, at, depth + 1);
      return;
    }
    if (operator === "+" || operator === ":+") {
      if (word !== null) this.valueSafe(this.wordValue(word), as, verdict, at, depth + 1);
      return;
    }
    verdict.unknown(`\`${this.text(expansion).slice(0, 80)}\` is evaluated`);
  }

  /**
   * A variable's value where `at` evaluates it: every value the line assigns it, and, unless an
   * assignment comes before `at`, the one it has when the line starts (from the environment, or
   * from a file `source`d before, which is not known).
   */
  private readName(name: string, as: EvaluatedAs, verdict: Verdict, at: number, depth: number): void {
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

  private valueSafe(value: Value, as: EvaluatedAs, verdict: Verdict, at: number, depth: number): void {
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

  /** What a word assigns, as far as the line shows it. */
  private wordValue(word: WordNode): Value {
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
  private assignedValue(assign: AssignNode): Value {
    const value = assign.Array !== null ? this.arrayValue(assign.Array) : assign.Value !== null ? this.wordValue(assign.Value) : ({ kind: "text", text: "" } as Value);
    return assign.Append ? this.appended(value) : value;
  }

  /** What the words of `for x in WORDS` give x: `{1..9}` and numbers' programs give numbers. */
  private itemValue(word: WordNode): Value {
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
  private literal(word: WordNode): string | undefined {
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

  private plain(expansion: ParamExpNode): boolean {
    return expansion.Exp === null && !expansion.Excl && !expansion.Length && expansion.Index === null && expansion.Slice === null && (expansion.Repl === null || expansion.Repl === undefined) && /^[A-Za-z_][A-Za-z0-9_]*$/.test(expansion.Param?.Value ?? "");
  }

  /** Options of a builtin: those of `valued` take a value (`read -a NAME`); the rest are flags, then operands. */
  private options(words: readonly WordNode[], valued: string): { operands: WordNode[]; options: Map<string, WordNode[]> } {
    const options = new Map<string, WordNode[]>();
    let index = 0;
    for (; index < words.length; index++) {
      const text = this.literal(words[index]!);
      if (text === "--") {
        index++;
        break;
      }
      if (text === undefined || !/^-[A-Za-z]/.test(text)) break;
      for (let at = 1; at < text.length; at++) {
        const letter = text[at]!;
        if (!valued.includes(letter)) {
          if (!options.has(letter)) options.set(letter, []);
          continue;
        }
        // The value is the rest of the word, or the next word.
        const list = options.get(letter) ?? [];
        // An attached one (`-aNAME`) is not taken apart: a name given so is taken as not known.
        if (at + 1 < text.length) list.push(words[index]!);
        else if (words[index + 1] !== undefined) list.push(words[++index]!);
        options.set(letter, list);
        break;
      }
    }
    return { operands: words.slice(index), options };
  }

  /**
   * Whether a command substitution prints only numbers: its last command (of a pipeline) is one
   * of a few programs that do (`wc -l` of its input, `nproc`, `date +%s`, `id -u`, `seq`, `grep -c`
   * of one file, `git rev-list --count`, `tput cols`, `getconf`, `stat -c %s`).
   */
  private printsNumbers(substitution: Node & { Stmts: { Cmd: unknown }[] }): boolean {
    const statements = substitution.Stmts ?? [];
    if (statements.length !== 1) return false;
    let command = statements[0]!.Cmd as Node | null;
    while (command !== null && command !== undefined && this.type(command) === "BinaryCmd") {
      const binary = command as Node & { Y: { Cmd: unknown }; OpPos: Position };
      if (this.source.slice(binary.OpPos.Offset(), binary.OpPos.Offset() + 2) === "||" || this.source[binary.OpPos.Offset()] !== "|") return false;
      command = binary.Y.Cmd as Node | null;
    }
    if (command === null || command === undefined || this.type(command) !== "CallExpr") return false;
    const words = (command as CallNode).Args.map((word) => this.literal(word));
    if (words.some((word) => word === undefined)) return false;
    const [program, ...rest] = words as string[];
    const options = rest.filter((word) => word.startsWith("-"));
    const operands = rest.filter((word) => !word.startsWith("-"));
    switch (program) {
      case "wc":
        return operands.length === 0 && options.every((option) => /^-[lcmwL]+$|^--(lines|bytes|chars|words|max-line-length)$/.test(option));
      case "nproc":
        return operands.length === 0;
      case "date":
        return operands.every((operand) => /^\+(%[sNYmdHMSjuVwGgCyU]|[-:. ])+$/.test(operand)) && options.every((option) => /^(-u|--utc)$/.test(option));
      case "id":
        return operands.length === 0 && options.length > 0 && options.every((option) => /^-[ugGr]+$/.test(option) && !/^-r+$/.test(option));
      case "seq":
        return rest.every((word) => /^-?[0-9]+(\.[0-9]+)?$|^-w$/.test(word));
      case "grep":
      case "egrep":
      case "fgrep":
        return options.some((option) => /^-[a-zA-Z]*c/.test(option) || option === "--count") && options.every((option) => /^-[civwxFEPsn]+$|^--count$/.test(option)) && operands.length <= 2;
      case "git":
        return rest[0] === "rev-list" && rest.includes("--count");
      case "tput":
        return rest.length === 1 && /^(cols|lines|colors)$/.test(rest[0]!);
      case "getconf":
        return rest.length === 1 && /^_?(NPROCESSORS_(ONLN|CONF)|PAGE_?SIZE|ARG_MAX)$/.test(rest[0]!);
      case "stat":
        return rest.some((word, index) => /^(-c|--format|--printf)$/.test(rest[index - 1] ?? "") && /^(%[sYXZWibhugd]|\s|\\n)+$/.test(word));
      case "echo":
        return rest.every((word) => /^-?[0-9]+$/.test(word));
      default:
        return false;
    }
  }
}
