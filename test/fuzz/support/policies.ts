import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import fc from "fast-check";
import { examplesDir } from "./harness.js";

/**
 * Policies for fuzzing: texts derived from the grammar (grammar/vigil.ebnf), every production and
 * every spelling of its tokens, and mutations of the shipped examples at the level of bytes and of
 * tokens. The generated texts are mostly well-formed, so they reach the checker and the engines;
 * the mutations are mostly broken, so they exercise recovery and the diagnostics.
 */

// ---- generated from the grammar --------------------------------------------------------------

/** Names shared with the generated traces, so that conditions match events often. */
export const actionNames = ["read", "write", "send", "Bash", "cat", "fetch", "x"];
export const keyNames = ["path", "to", "url", "n", "command", "flag"];
const patternNames = ["p1", "p2", "secret", "egress"];

const reservedWords = ["policy", "pattern", "rule", "abs", "prec", "resp", "bresp", "rslv", "until", "always", "not", "and", "or", "implies", "once", "eventually", "in", "action", "status", "output", "ok", "error", "true", "false", "null"];

/** An Identifier: a name from the pools mostly, sometimes a fresh one, rarely a long one. */
const identifier: fc.Arbitrary<string> = fc.oneof(
  { weight: 30, arbitrary: fc.constantFrom(...actionNames, ...keyNames, "block", "warn", "ask", "index", "notes") },
  {
    weight: 10,
    arbitrary: fc
      .tuple(fc.constantFrom(..."abcxyzABCZ_"), fc.string({ unit: fc.constantFrom(..."abz09_XY"), maxLength: 12 }))
      .map(([first, rest]) => first + rest)
      .filter((name) => !reservedWords.includes(name)),
  },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 3_000 }).map((n) => "n" + "a".repeat(n)) },
);

/** Text for a String: printable, any Unicode (lone surrogates too), control characters. */
const stringContent: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...actionNames, ...keyNames, "a.txt", "*.env", "/etc/passwd", "", " ") },
  { weight: 3, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom("\u0000", "\u001b", "\t", "\n", "\u202e", "\ud800", "\udfff", "\ufeff", "é", "💥"), maxLength: 8 }) },
);

/** A String token: JSON text, which escapes control characters and lone surrogates. */
const stringToken = stringContent.map((s) => JSON.stringify(s));

/** A wildcard String for `~`: star, question mark and classes among ordinary text, now and then malformed. */
const wildcardToken: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 200, arbitrary: fc.array(fc.constantFrom("*", "?", "[a-z]", "[!x]", "[0-9]", "\\*", "a", "b", ".env", "x", "é", "-", "/", "secret"), { maxLength: 8 }) },
    { weight: 1, arbitrary: fc.array(fc.constantFrom("*", "a", "[", "]", "\\", "[z-a]", "[]", "[!]"), { maxLength: 6 }) },
  )
  .map((parts) => JSON.stringify(parts.join("")));

/** A Number token, the JSON forms and the ones a double cannot hold. */
const numberToken: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -1000, max: 1000 }).map(String) },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)) },
  { weight: 1, arbitrary: fc.constantFrom("0", "-0", "1e21", "1E400", "-1E400", "9007199254740993", "9007199254740992", "1.5e-400", "123456789012345678901234567890") },
);

const valueToken: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: stringToken },
  { weight: 2, arbitrary: numberToken },
  { weight: 1, arbitrary: fc.constantFrom("true", "false", "null") },
);

const symbolToken: fc.Arbitrary<string> = fc.oneof(identifier, stringToken);

const keySegment: fc.Arbitrary<string> = fc.oneof({ weight: 6, arbitrary: identifier }, { weight: 2, arbitrary: stringToken }, { weight: 1, arbitrary: fc.constantFrom('"__proto__"', '"constructor"', "__proto__") });
// After the first segment, a list index (`argv.0`), now and then a malformed or huge one (V0005).
const indexSegment: fc.Arbitrary<string> = fc.oneof({ weight: 6, arbitrary: fc.nat(12).map(String) }, { weight: 1, arbitrary: fc.constantFrom("01", "0x", "4294967294", "4294967295", "99999999999999999999") });
const laterSegment: fc.Arbitrary<string> = fc.oneof({ weight: 3, arbitrary: keySegment }, { weight: 1, arbitrary: indexSegment });
const keyPath = fc.oneof(
  { weight: 4, arbitrary: keySegment },
  { weight: 1, arbitrary: fc.tuple(keySegment, fc.array(laterSegment, { minLength: 1, maxLength: 2 })).map(([first, rest]) => [first, ...rest].join(".")) },
);

const variable = fc.constantFrom("$x", "$y", "$f", "$action", "$_1");

/** A list in braces, with an optional trailing comma. */
const braced = (element: fc.Arbitrary<string>, maxLength: number): fc.Arbitrary<string> =>
  fc.tuple(fc.array(element, { maxLength }), fc.boolean()).map(([elements, trailing]) => `{${elements.join(", ")}${trailing && elements.length > 0 ? "," : ""}}`);

/** The atoms of a condition on one event, and references to the patterns `names` declared before. */
function primaryAtom(names: readonly string[], variables: boolean): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: braced(symbolToken, 4).map((set) => `action in ${set}`) },
    { weight: 2, arbitrary: fc.constantFrom("status = ok", "status = error") },
    { weight: 2, arbitrary: wildcardToken.map((w) => `output ~ ${w}`) },
    { weight: 3, arbitrary: fc.tuple(keyPath, braced(valueToken, 4)).map(([key, set]) => `${key} in ${set}`) },
    { weight: 2, arbitrary: fc.tuple(keyPath, wildcardToken).map(([key, w]) => `${key} ~ ${w}`) },
    ...(variables ? [{ weight: 2, arbitrary: fc.tuple(keyPath, variable).map(([key, v]) => `${key} = ${v}`) }] : []),
    ...(names.length > 0 ? [{ weight: 2, arbitrary: fc.constantFrom(...names) }] : []),
  );
}

const spelling = {
  and: fc.constantFrom(" and ", " ∧ ", "\tand\n    "),
  or: fc.constantFrom(" or ", " ∨ ", "\n    or "),
  implies: fc.constantFrom(" implies ", " ⇒ ", " → ", " -> "),
  negation: fc.constantFrom("not ", "¬"),
  temporal: fc.constantFrom("once ", "◇⁻", "eventually ", "◇⁺"),
};

/**
 * An expression of the grammar, at most `depth` levels of parentheses deep; `temporal` allows
 * `once` and `eventually` (the body of `always`), `variables` allows `KEY = $x`.
 */
function expression(names: readonly string[], options: { temporal: boolean; variables: boolean }, maxDepth: number): fc.Arbitrary<string> {
  const prefix = options.temporal ? fc.oneof(spelling.negation, spelling.temporal) : spelling.negation;
  const atom = primaryAtom(names, options.variables);
  const build = fc.memo<string>((depth): fc.Arbitrary<string> => {
    const primary: fc.Arbitrary<string> = depth <= 1 ? atom : fc.oneof({ weight: 4, arbitrary: atom }, { weight: 1, arbitrary: build(depth - 1).map((e) => `(${e})`) });
    const unary: fc.Arbitrary<string> = fc.tuple(fc.oneof({ weight: 3, arbitrary: fc.constant([] as string[]) }, { weight: 2, arbitrary: fc.array(prefix, { minLength: 1, maxLength: 2 }) }), primary).map(([prefixes, p]) => prefixes.join("") + p);
    const andExpression: fc.Arbitrary<string> = fc.tuple(unary, fc.option(fc.tuple(spelling.and, unary), { nil: undefined })).map(([first, rest]) => (rest === undefined ? first : first + rest[0] + rest[1]));
    const orExpression: fc.Arbitrary<string> = fc.tuple(andExpression, fc.option(fc.tuple(spelling.or, andExpression), { nil: undefined, freq: 3 })).map(([first, rest]) => (rest === undefined ? first : first + rest[0] + rest[1]));
    return fc.tuple(orExpression, fc.option(fc.tuple(spelling.implies, depth <= 1 ? orExpression : build(depth - 1)), { nil: undefined, freq: 5 })).map(([left, right]) => (right === undefined ? left : left + right[0] + right[1]));
  });
  return build(maxDepth);
}

/**
 * Operands in parentheses: mostly as many as the form takes, sometimes any number. When the
 * statement binds a variable, each operand ends with a conjunct binding it, as the variable
 * discipline asks (V1006, V1007); a variable anywhere else is left to the checker to refuse.
 */
function operandList(names: readonly string[], arity: number): fc.Arbitrary<string> {
  const operand = expression(names, { temporal: false, variables: false }, 2);
  const strayVariables = expression(names, { temporal: false, variables: true }, 2);
  const count = fc.oneof({ weight: 60, arbitrary: fc.constant(arity) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 4 }) });
  // A variable ties the value of one pattern to another's, so a one-pattern form binds none.
  const binding = fc.oneof(
    { weight: 15, arbitrary: fc.constant(undefined) },
    ...(arity > 1 ? [{ weight: 15, arbitrary: fc.tuple(keyPath, variable) }] : []),
    { weight: 1, arbitrary: fc.constant(null) },
  );
  return fc
    .tuple(count, binding, fc.boolean())
    .chain(([n, bound, trailing]) =>
      fc.array(bound === null ? strayVariables : operand, { minLength: n, maxLength: n }).chain((operands) =>
        (bound === undefined || bound === null ? fc.constant(operands) : fc.array(keyPath, { minLength: n, maxLength: n }).map((keys) => operands.map((o, i) => `(${o}) and ${keys[i]} = ${bound[1]}`))).map(
          (written) => `(${written.join(", ")}${trailing && written.length > 0 ? "," : ""})`,
        ),
      ),
    );
}

const arity: Record<string, number> = { abs: 1, prec: 2, resp: 2, rslv: 2, until: 3 };

function statement(names: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.tuple(fc.constantFrom("always ", "□ ", "always\n    "), expression(names, { temporal: true, variables: false }, 3)).map(([word, e]) => word + e),
    fc
      .tuple(fc.oneof({ weight: 50, arbitrary: fc.integer({ min: 1, max: 5 }).map((n) => `[${n}]`) }, { weight: 1, arbitrary: fc.constantFrom("[0]", "[1.5]", "[1E400]", "[9007199254740993]", "") }), operandList(names, 2))
      .map(([bound, operands]) => `bresp${bound}${operands}`),
    fc.constantFrom("abs", "prec", "resp", "rslv", "until").chain((form) => operandList(names, arity[form]!).map((operands) => form + operands)),
  );
}

/** What a violation does: `block`, `warn` or `ask`, with a remediation message or without. */
const response: fc.Arbitrary<string> = fc.option(
  fc.tuple(fc.constantFrom("block", "warn", "ask"), fc.option(stringToken, { nil: undefined })).map(([word, message]) => ` ${word}${message !== undefined ? " " + message : ""}`),
  { nil: "", freq: 3 },
);

const oneLine = (text: string): string => text.replace(/[\r\n\u2028\u2029\u0085]/g, " ");

const docComment: fc.Arbitrary<string> = fc.option(fc.string({ maxLength: 40 }).map((text) => `  /// ${oneLine(text)}\n`), { nil: "" });

const lineComment: fc.Arbitrary<string> = fc.option(fc.string({ maxLength: 30 }).map((text) => `  // ${oneLine(text)}\n`), { nil: "", freq: 4 });

/**
 * One policy: patterns first (each over atoms only, so that they form no cycle), then rules that
 * may refer to them, named `r0`, `r1`, … mostly, so that most names are unique.
 */
const policy: fc.Arbitrary<string> = fc.subarray(patternNames).chain((names) => {
  const patternDeclarations = fc.tuple(...names.map((name) => fc.tuple(docComment, expression([], { temporal: false, variables: false }, 1)).map(([doc, e]) => `${doc}  pattern ${name} = ${e}\n`)));
  const rule = (index: number) =>
    fc
      .tuple(docComment, lineComment, fc.oneof({ weight: 5, arbitrary: fc.constant(`r${index}`) }, { weight: 1, arbitrary: identifier }), statement(names), response)
      .map(([doc, comment, name, s, r]) => `${comment}${doc}  rule ${name}: ${s}${r}\n`);
  const rules = fc.integer({ min: 0, max: 5 }).chain((count) => fc.tuple(...Array.from({ length: count }, (_, i) => rule(i))));
  return fc.tuple(docComment, identifier, patternDeclarations, rules).map(([doc, name, patterns, ruleTexts]) => `${doc.trimStart()}policy ${name} {\n${patterns.join("")}${ruleTexts.join("")}}\n`);
});

/** A whole file from the grammar: zero to three policies, with the line ends and blanks of real files. */
export const generatedPolicy: fc.Arbitrary<string> = fc
  .tuple(fc.oneof({ weight: 1, arbitrary: fc.constant([]) }, { weight: 12, arbitrary: fc.array(policy, { minLength: 1, maxLength: 3 }) }), fc.constantFrom("\n", "\r\n"), fc.constantFrom("", "\ufeff", "\n\n"))
  .map(([policies, lineEnd, prefix]) => prefix + policies.join("\n").replace(/\n/g, lineEnd));

// ---- the shipped examples and their traces ------------------------------------------------

export interface ExamplePolicy {
  /** Its path relative to examples/, for messages. */
  readonly name: string;
  readonly text: string;
  /** Canonical or recorded traces beside it (absolute paths); empty for the AgentDojo policies. */
  readonly traces: readonly string[];
}

/** Every shipped example policy with the traces in its directory. */
export function examplePolicies(): ExamplePolicy[] {
  const found: ExamplePolicy[] = [];
  for (const directory of readdirSync(examplesDir, { withFileTypes: true })) {
    if (!directory.isDirectory()) continue;
    const path = join(examplesDir, directory.name);
    const files = readdirSync(path).sort();
    const traces = files.filter((f) => f.endsWith(".jsonl")).map((f) => join(path, f));
    for (const file of files.filter((f) => f.endsWith(".vigil"))) found.push({ name: `${directory.name}/${basename(file)}`, text: readFileSync(join(path, file), "utf8"), traces });
  }
  return found;
}

// ---- mutations -----------------------------------------------------------------------------

/**
 * One edit of a text. Positions are fractions of the text's length (or of its number of tokens),
 * so that an edit means the same on every input and shrinks towards the start.
 */
export type TextMutation =
  | { readonly kind: "delete-token" | "duplicate-token"; readonly at: number }
  | { readonly kind: "swap-tokens"; readonly at: number; readonly with: number }
  | { readonly kind: "insert"; readonly at: number; readonly text: string }
  | { readonly kind: "long-name"; readonly at: number; readonly length: number }
  | { readonly kind: "deep-nesting"; readonly at: number; readonly depth: number; readonly opener: string }
  | { readonly kind: "truncate"; readonly at: number }
  | { readonly kind: "flip-byte"; readonly at: number; readonly bit: number }
  | { readonly kind: "raw-bytes"; readonly at: number; readonly bytes: readonly number[] };

const fraction = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });

/** Text worth inserting into a policy: stray tokens, odd Unicode, control characters. */
const insertion: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("{", "}", "(", ")", ",", ":", "=", "~", ".", "$", "\"", "///", "//", "[", "]", "block", "warn", "ask \"x\"", "rule", "policy", "pattern", "in", "{}", "{,}", "\\", "'"),
  fc.constantFrom("\u0000", "\u0007", "\u001b[31m", "\r", "\u2028", "\u202e", "\u200b", "\ufeff", "\ud800", "\udc00", "□", "◇", "◇⁻", "→", "💥", "\u0301"),
  fc.string({ unit: "binary", maxLength: 6 }),
  fc.string({ unit: "grapheme", maxLength: 6 }),
);

export const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom("delete-token" as const, "duplicate-token" as const), at: fraction }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("swap-tokens" as const), at: fraction, with: fraction }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("insert" as const), at: fraction, text: insertion }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("long-name" as const), at: fraction, length: fc.integer({ min: 1_000, max: 100_000 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("deep-nesting" as const),
      at: fraction,
      depth: fc.oneof(fc.integer({ min: 95, max: 105 }), fc.integer({ min: 1, max: 20_000 })),
      opener: fc.constantFrom("(", "not ", "¬", "once ", "eventually ", "{", "[", "a implies "),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("truncate" as const), at: fraction }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("flip-byte" as const), at: fraction, bit: fc.integer({ min: 0, max: 7 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("raw-bytes" as const), at: fraction, bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 4 }) }) },
);

/**
 * Splits a text into rough tokens: words, strings, runs of white space and single other
 * characters. Rough is enough: a mutation only needs plausible units to delete, repeat and swap.
 */
export function roughTokens(text: string): string[] {
  return text.match(/"(?:[^"\\\n]|\\.)*"?|[A-Za-z_$][A-Za-z0-9_]*|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\s+|\/\/\/?[^\n]*|[\s\S]/gu) ?? [];
}

const closer: Record<string, string> = { "(": ")", "{": "}", "[": "]" };

/** Applies the edits in order and returns the bytes: a policy file need not be valid UTF-8. */
export function mutateText(text: string, mutations: readonly TextMutation[]): Buffer {
  let current: string | Buffer = text;
  for (const m of mutations) {
    if (m.kind === "flip-byte" || m.kind === "raw-bytes" || m.kind === "truncate") {
      const bytes: Buffer = Buffer.isBuffer(current) ? current : Buffer.from(current, "utf8");
      const at = Math.floor(m.at * bytes.length);
      if (m.kind === "truncate") current = bytes.subarray(0, at);
      else if (m.kind === "flip-byte") {
        const copy = Buffer.from(bytes);
        if (copy.length > 0) copy[at] = copy[at]! ^ (1 << m.bit);
        current = copy;
      } else current = Buffer.concat([bytes.subarray(0, at), Buffer.from(m.bytes), bytes.subarray(at)]);
      continue;
    }
    // Token edits work on text; bytes that are not UTF-8 become replacement characters here.
    const source = Buffer.isBuffer(current) ? current.toString("utf8") : current;
    const tokens = roughTokens(source);
    const index = Math.floor(m.at * tokens.length);
    switch (m.kind) {
      case "delete-token":
        tokens.splice(index, 1);
        break;
      case "duplicate-token":
        if (tokens.length > 0) tokens.splice(index, 0, tokens[index]!);
        break;
      case "swap-tokens": {
        const other = Math.floor(m.with * tokens.length);
        if (tokens.length > 0) [tokens[index], tokens[other]] = [tokens[other]!, tokens[index]!];
        break;
      }
      case "insert":
        tokens.splice(index, 0, m.text);
        break;
      case "long-name":
        tokens.splice(index, 0, " L" + "x".repeat(m.length) + " ");
        break;
      case "deep-nesting": {
        const close = closer[m.opener.trim()] ?? "";
        tokens.splice(index, 0, m.opener.repeat(m.depth) + "action in {x}" + close.repeat(m.depth));
        break;
      }
    }
    current = tokens.join("");
  }
  return Buffer.isBuffer(current) ? current : Buffer.from(current, "utf8");
}
