import type { EvaluatedText } from "./evaluated.js";
import { VariableValues, Verdict } from "./evaluated-values.js";
import { EvaluatedWords, NUMBER, type AssignNode, type CallNode, type Lit, type Node, type ParamExpNode, type Position, type Syntax, type Value, type WordNode } from "./evaluated-words.js";

/**
 * The places where a parsed line has Bash evaluate text as code (the constructs evaluated.ts
 * lists), found as the parser's walk visits each node, and the builtins that assign variables
 * (`read`, `declare`, `getopts`, …) or run text the line does not show (`fc`, `mapfile -C`).
 */

interface Site {
  readonly by: string;
  readonly node: Node;
  readonly check: (verdict: Verdict) => void;
}

const ARITHMETIC_TESTS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);
const ASSIGNMENT_OPERATORS = new Set(["=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="]);
const SHELLS = new Set(["bash", "sh", "zsh", "ksh", "dash", "mksh", "yash"]);

/**
 * Collects, node by node as the parser's walk visits them, what the line assigns and where it
 * evaluates text; {@link EvaluationCollector.results} then judges each place with all the line's
 * assignments known.
 */
export class EvaluationCollector {
  private readonly sites: Site[] = [];
  /** Places reported outright (`fc`, `mapfile -C`, an interactive shell), with why. */
  private readonly outright: { by: string; node: Node; why: string }[] = [];
  /** The line's words read as values, and the values the line gives its variables. */
  private readonly words: EvaluatedWords;
  private readonly values: VariableValues;

  constructor(
    private readonly source: string,
    syntax: Syntax,
  ) {
    this.words = new EvaluatedWords(source, syntax);
    this.values = new VariableValues(this.words);
  }

  visit(node: unknown, type: string): void {
    const source = this.source;
    switch (type) {
      case "ArithmExp": {
        const arithm = node as Node & { X: Node | null; Bracket: boolean };
        const by = arithm.Bracket ? "$[…]" : "$((…))";
        this.site(by, arithm, (verdict) => this.values.arithmetic(arithm.X, verdict, arithm.Pos().Offset(), 0));
        return;
      }
      case "ArithmCmd": {
        const arithm = node as Node & { X: Node | null };
        this.site("((…))", arithm, (verdict) => this.values.arithmetic(arithm.X, verdict, arithm.Pos().Offset(), 0));
        return;
      }
      case "LetClause": {
        const clause = node as Node & { Exprs: Node[] };
        this.site("let", clause, (verdict) => {
          for (const expression of clause.Exprs) this.values.arithmetic(expression, verdict, clause.Pos().Offset(), 0);
        });
        return;
      }
      case "CStyleLoop": {
        const loop = node as Node & { Init: Node | null; Cond: Node | null; Post: Node | null };
        this.site("for ((…))", loop, (verdict) => {
          for (const part of [loop.Init, loop.Cond, loop.Post]) this.values.arithmetic(part, verdict, loop.Pos().Offset(), 0);
        });
        return;
      }
      case "BinaryArithm": {
        // `x = …`, `x += …` in any arithmetic: x then holds a number.
        const binary = node as Node & { X: Node; Y: Node };
        const operator = source.slice(binary.X.End().Offset(), binary.Y.Pos().Offset()).trim();
        if (ASSIGNMENT_OPERATORS.has(operator)) {
          const name = this.arithmeticTarget(binary.X);
          if (name !== undefined) this.values.assign(name, binary.End().Offset(), NUMBER);
        }
        return;
      }
      case "UnaryArithm": {
        const unary = node as Node & { X: Node };
        if (/\+\+|--/.test(this.words.text(unary).replace(this.words.text(unary.X), ""))) {
          const name = this.arithmeticTarget(unary.X);
          if (name !== undefined) this.values.assign(name, unary.End().Offset(), NUMBER);
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
            if (!this.values.associative.has(name)) this.values.arithmetic(index, verdict, assign.Pos().Offset(), 0);
          });
        }
        for (const element of assign.Array?.Elems ?? []) {
          const index = element.Index;
          if (index === null || name === undefined) continue;
          this.site(`${name}=([…]=…)`, assign, (verdict) => {
            if (!this.values.associative.has(name)) this.values.arithmetic(index, verdict, assign.Pos().Offset(), 0);
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
        if (iteration.Items.length === 0) this.values.assign(iteration.Name.Value, end, { kind: "unknown", why: "the loop's words are the positional parameters" });
        for (const item of iteration.Items) this.values.assign(iteration.Name.Value, end, () => this.words.itemValue(item));
        return;
      }
      case "ForClause": {
        const clause = node as Node & { Select: boolean };
        if (clause.Select) this.values.assign("REPLY", clause.Pos().Offset(), { kind: "unknown", why: "`select` reads it" });
        return;
      }
      case "BinaryTest": {
        const test = node as Node & { X: Node; Y: Node };
        const operator = source.slice(test.X.End().Offset(), test.Y.Pos().Offset()).trim();
        if (ARITHMETIC_TESTS.has(operator)) {
          this.site(`[[ … ${operator} … ]]`, test, (verdict) => {
            this.values.arithmetic(test.X, verdict, test.Pos().Offset(), 0);
            this.values.arithmetic(test.Y, verdict, test.Pos().Offset(), 0);
          });
        } else if (operator === "=~") {
          this.values.assign("BASH_REMATCH", test.End().Offset(), { kind: "unknown", why: "`=~` sets it to what it matched" });
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
        this.words.numeric.set((node as Node).Pos().Offset(), this.printsNumbers(node as Node & { Stmts: { Cmd: unknown }[] }));
        return;
      default:
        return;
    }
  }

  /** The constructs that evaluate text not known to be harmless. */
  results(): EvaluatedText[] {
    // A variable declared `-i` takes every value given to it as an arithmetic expression.
    for (const name of this.values.integers) {
      for (const assignment of this.values.assignments.get(name) ?? []) {
        const word = assignment.word;
        const command = assignment.command;
        if (word !== undefined) this.site(`declare -i ${name}`, word, (verdict) => this.values.arithmetic(word, verdict, word.Pos().Offset(), 0));
        else if (command !== undefined) {
          // `declare -i n; read n`: what is read is evaluated.
          this.site(`declare -i ${name}`, command, (verdict) => this.values.valueSafe(assignment.value(), "arithmetic", verdict, command.Pos().Offset(), 0));
        }
      }
    }
    const found = new Map<string, EvaluatedText>();
    const cut = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);
    for (const { by, node, why } of this.outright) found.set(`${by}\u0000${node.Pos().Offset()}`, { by, text: cut(this.words.text(node)), why });
    for (const site of this.sites) {
      const verdict = new Verdict();
      site.check(verdict);
      if (verdict.why === undefined && verdict.environment.size === 0) continue;
      const key = `${site.by}\u0000${this.words.text(site.node)}`;
      if (found.has(key)) continue;
      found.set(key, {
        by: site.by,
        text: cut(this.words.text(site.node)),
        ...(verdict.why !== undefined ? { why: verdict.why } : { environment: Object.fromEntries(verdict.environment) }),
      });
    }
    return [...found.values()];
  }

  private site(by: string, node: Node, check: (verdict: Verdict) => void): void {
    this.sites.push({ by, node, check });
  }

  /** The name an arithmetic assignment sets (`x = …`, `a[i] += …`, `x++`). */
  private arithmeticTarget(node: Node): string | undefined {
    if (this.words.type(node) !== "Word") return undefined;
    const parts = (node as WordNode).Parts;
    if (parts.length !== 1) return undefined;
    const part = parts[0]!;
    const type = this.words.type(part);
    if (type === "Lit" && /^[A-Za-z_][A-Za-z0-9_]*$/.test((part as Lit).Value)) return (part as Lit).Value;
    if (type === "ParamExp") return (part as ParamExpNode).Param?.Value;
    return undefined;
  }

  private parameter(expansion: ParamExpNode): void {
    const name = expansion.Param?.Value;
    if (name === undefined) return;
    const at = expansion.Pos().Offset();
    const index = expansion.Index;
    if (index !== null && !/^[@*]$/.test(this.words.text(index).trim())) {
      this.site(`\${${name}[…]}`, expansion, (verdict) => {
        if (!this.values.associative.has(name)) this.values.arithmetic(index, verdict, at, 0);
      });
    }
    const slice = expansion.Slice;
    if (slice !== null) {
      this.site(`\${${name}:…}`, expansion, (verdict) => {
        this.values.arithmetic(slice.Offset, verdict, at, 0);
        this.values.arithmetic(slice.Length, verdict, at, 0);
      });
    }
    const operator = this.words.operator(expansion);
    if (operator === "@P") this.site(`\${${name}@P}`, expansion, (verdict) => this.values.readName(name, "prompt", verdict, at, 0));
    if (expansion.Excl && expansion.Names === 0 && !(index !== null && /^[@*]$/.test(this.words.text(index).trim()))) {
      this.site(`\${!${name}}`, expansion, (verdict) => this.values.readName(name, "reference", verdict, at, 0));
    }
    // `${x:=word}`: x is given the word when it is unset (or empty).
    if ((operator === "=" || operator === ":=") && expansion.Exp !== null) {
      const word = expansion.Exp.Word;
      this.values.assign(name, expansion.End().Offset(), () => (word !== null ? this.words.wordValue(word) : { kind: "text", text: "" }));
    }
  }

  private declaration(clause: Node & { Variant: Lit; Args: AssignNode[] }): void {
    const variant = clause.Variant.Value;
    const flags = new Set<string>();
    for (const argument of clause.Args) {
      const flag = argument.Naked && argument.Name === null && argument.Value !== null ? this.words.literal(argument.Value) : undefined;
      if (flag !== undefined && /^-[A-Za-z]+$/.test(flag)) for (const letter of flag.slice(1)) flags.add(letter);
    }
    if (variant === "nameref") flags.add("n");
    for (const argument of clause.Args) {
      const name = argument.Name?.Value;
      if (name === undefined) {
        const value = argument.Value;
        if (value === null) continue;
        const literal = this.words.literal(value);
        if (literal !== undefined && /^[-+][A-Za-z]+$/.test(literal)) continue;
        // `declare "$V=1"`, `export 'a[$(…)]=1'`, `export "PATH=$PATH:x"`: a name (and subscript) given as text.
        this.referenceSite(`${variant} NAME=…`, clause, value, true);
        const named = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=/.exec(literal ?? this.words.leadingLiteral(value.Parts.length === 1 && this.words.type(value.Parts[0]) === "DblQuoted" ? ((value.Parts[0] as unknown as { Parts: Node[] }).Parts ?? []) : value.Parts));
        if (named !== null) {
          const text = literal;
          this.values.assign(named[1]!, argument.End().Offset(), text !== undefined ? { kind: "text", text: text.slice(named[0].length) } : { kind: "unknown", why: `\`${this.words.text(value).slice(0, 80)}\` is put together when it runs` });
        }
        continue;
      }
      if (flags.has("A")) this.values.associative.add(name);
      if (flags.has("i")) this.values.integers.add(name);
      if (argument.Naked) continue;
      if (flags.has("n") && argument.Value !== null) {
        // A name reference: its value is a variable's name, subscript included.
        this.referenceSite(`${variant} -n`, argument, argument.Value);
      }
      this.values.assign(name, argument.End().Offset(), () => this.words.assignedValue(argument), argument.Value ?? undefined);
    }
  }

  private call(call: CallNode): void {
    if (call.Args.length === 0) {
      for (const assign of call.Assigns) {
        const name = assign.Name?.Value;
        if (name === undefined) continue;
        this.values.assign(name, assign.End().Offset(), () => this.words.assignedValue(assign), assign.Value ?? undefined);
      }
      return;
    }
    // `PS4=… bash -x s.sh`: an assignment before a command is in that command's environment.
    for (const assign of call.Assigns) {
      const name = assign.Name?.Value;
      if (name !== undefined) this.values.assign(name, assign.End().Offset(), () => this.words.assignedValue(assign));
    }
    const words = call.Args;
    let at = 0;
    while (at < words.length - 1 && ["builtin", "command"].includes(this.words.literal(words[at]!) ?? "")) at++;
    const name = this.words.literal(words[at]!);
    if (name === undefined) return;
    const rest = words.slice(at + 1);
    const texts = rest.map((word) => this.words.literal(word));
    const program = name.replace(/^.*\//, "");
    const unknown = (why: string) => ({ kind: "unknown" as const, why });
    const end = call.End().Offset();
    switch (program) {
      case "source":
      case ".":
      case "eval":
        this.values.opaque.push(call.Pos().Offset());
        return;
      case "read": {
        const { operands, options } = this.options(rest, "adinNptu");
        for (const word of [...operands, ...(options.get("a") ?? [])]) this.namedBy("read", call, word, unknown("`read` reads it"));
        if (operands.length === 0 && !options.has("a")) this.values.assign("REPLY", end, unknown("`read` reads it"));
        return;
      }
      case "mapfile":
      case "readarray": {
        const { operands, options } = this.options(rest, "dnOsuCc");
        if (options.has("C")) this.outright.push({ by: `${program} -C`, node: call, why: `\`${program} -C\` runs its callback as a command for the lines it reads` });
        if (operands[0] !== undefined) this.namedBy(program, call, operands[0], unknown(`\`${program}\` reads it`));
        else this.values.assign("MAPFILE", end, unknown(`\`${program}\` reads it`));
        return;
      }
      case "printf": {
        if (texts[0] === "-v" && rest[1] !== undefined) this.namedBy("printf -v", call, rest[1], unknown("`printf -v` sets it"));
        return;
      }
      case "getopts": {
        if (rest[1] !== undefined) this.namedBy("getopts", call, rest[1], unknown("`getopts` sets it"));
        this.values.assign("OPTARG", end, unknown("`getopts` sets it"));
        return;
      }
      case "wait": {
        const { options } = this.options(rest, "p");
        for (const word of options.get("p") ?? []) this.namedBy("wait -p", call, word, NUMBER);
        return;
      }
      case "unset":
        for (const word of rest) {
          const text = this.words.literal(word);
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
    this.site(by, call, (verdict) => this.values.readName("PS4", "prompt", verdict, at, 0));
  }

  /** A name a builtin is given to set (`read NAME`, `printf -v NAME`): a reference, and the variable it sets. */
  private namedBy(by: string, call: CallNode, word: WordNode, value: Value): void {
    this.referenceSite(by, call, word);
    const text = this.words.literal(word);
    const name = text !== undefined ? /^([A-Za-z_][A-Za-z0-9_]*)/.exec(text)?.[1] : undefined;
    if (name !== undefined) this.values.assign(name, call.End().Offset(), value, undefined, call);
  }

  /**
   * A word Bash takes as a variable's name, a subscript included (`a[i]`): a literal is judged as
   * such; an expansion by the value it has. `assignment`: the word may be `NAME=VALUE`.
   */
  private referenceSite(by: string, node: Node, word: WordNode, assignment = false): void {
    this.site(by, node, (verdict) => {
      const at = node.Pos().Offset();
      const parts = word.Parts.length === 1 && this.words.type(word.Parts[0]) === "DblQuoted" ? ((word.Parts[0] as unknown as { Parts: Node[] }).Parts ?? []) : word.Parts;
      if (assignment) {
        // `export "PATH=$PATH:/x"`: the name is the literal text before the `=`.
        const lead = this.words.leadingLiteral(parts);
        const equals = lead.search(/\+?=/);
        if (equals >= 0) this.values.referenceText(lead.slice(0, equals), verdict, at, 0);
        else verdict.unknown(`the name in \`${this.words.text(word).slice(0, 80)}\` is known only when it runs`);
        return;
      }
      const literal = this.words.literal(word);
      if (literal !== undefined) {
        this.values.referenceText(literal, verdict, at, 0);
        return;
      }
      const only = parts.length === 1 ? parts[0]! : undefined;
      if (only !== undefined && this.words.type(only) === "ParamExp" && this.words.plain(only as ParamExpNode)) {
        this.values.readName((only as ParamExpNode).Param!.Value, "reference", verdict, at, 0);
        return;
      }
      verdict.unknown(`the name \`${this.words.text(word).slice(0, 80)}\` is known only when it runs`);
    });
  }

  /** Options of a builtin: those of `valued` take a value (`read -a NAME`); the rest are flags, then operands. */
  private options(words: readonly WordNode[], valued: string): { operands: WordNode[]; options: Map<string, WordNode[]> } {
    const options = new Map<string, WordNode[]>();
    let index = 0;
    for (; index < words.length; index++) {
      const text = this.words.literal(words[index]!);
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
    while (command !== null && command !== undefined && this.words.type(command) === "BinaryCmd") {
      const binary = command as Node & { Y: { Cmd: unknown }; OpPos: Position };
      if (this.source.slice(binary.OpPos.Offset(), binary.OpPos.Offset() + 2) === "||" || this.source[binary.OpPos.Offset()] !== "|") return false;
      command = binary.Y.Cmd as Node | null;
    }
    if (command === null || command === undefined || this.words.type(command) !== "CallExpr") return false;
    const words = (command as CallNode).Args.map((word) => this.words.literal(word));
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
