import { closestName, diagnostic, type Diagnostic } from "@vigil/diagnostics";
import { declarationExpressions, keyPathSegments, keyPathText, nameText, printExpr, walkExpressions, type Expr, type KeyCompare, type KeyPath, type PolicyDecl, type SourceFile } from "@vigil/syntax";
import { displayValue, keyPathId, keyPathNames, lookUpKey, numberOf, valueKey, type JsonValue, type KeyInfo, type KeyLookup, type Signature } from "@vigil/trace";

/**
 * Reports the symbols of a policy that the trace's signature Σ = (A, K, V) does not contain. By the
 * closed world (Section 5.1), such a symbol denotes the empty set and a condition on it is false;
 * that is legal but usually a misspelling, so actions and keys get a warning with the nearest known
 * name, and values an informational note.
 */
export function checkAgainstSignature(policy: PolicyDecl, signature: Signature, diagnostics: Diagnostic[]): void {
  // Key paths as a policy spells them, so that a suggestion is also a valid replacement, with their segments.
  const keyNames = new Map([...signature.keys.values()].map((info) => [info.segments.map(nameText).join("."), info.segments] as const));
  const budget: SuggestionBudget = { left: SUGGESTIONS_PER_POLICY };
  for (const item of policy.items) {
    walkExpressions(declarationExpressions(item), (expr) => checkAtom(expr, signature, keyNames, diagnostics, budget));
  }
  checkNegatedLists(policy, signature, diagnostics);
}

/**
 * A condition on a key whose values are lists holds when some element meets it, so its negation
 * holds only when no element does: `not (tags in {"x"})` is false on `["x", "y"]`. Written as an
 * allowlist (`not (region in {"us", "eu"})` to catch a region outside the set), it silently lets a
 * list with one allowed element among others through. Reported (V1109) for each condition negated
 * in what breaks the rule (under an odd number of `not` and left sides of `implies`, the body of an
 * `always` counted negated once), through the patterns a rule names, on a key that holds a list in
 * some event of Σ.
 */
function checkNegatedLists(policy: PolicyDecl, signature: Signature, diagnostics: Diagnostic[]): void {
  const patterns = new Map<string, Expr>();
  for (const item of policy.items) if (item.kind === "PatternDecl" && !patterns.has(item.name.text)) patterns.set(item.name.text, item.body);
  const reported = new Set<Expr>();
  const visit = (expr: Expr, negated: boolean, through: ReadonlySet<string>): void => {
    switch (expr.kind) {
      case "And":
      case "Or":
        for (const operand of expr.operands) visit(operand, negated, through);
        return;
      case "Not":
        visit(expr.operand, !negated, through);
        return;
      case "Once":
      case "Eventually":
        visit(expr.operand, negated, through);
        return;
      case "Implies":
        visit(expr.left, !negated, through);
        visit(expr.right, negated, through);
        return;
      case "PatternRef": {
        const body = patterns.get(expr.name.text);
        // A cycle is an error of its own (V1004): each pattern is followed once per path.
        if (body === undefined || through.has(expr.name.text)) return;
        visit(body, negated, new Set([...through, expr.name.text]));
        return;
      }
      case "KeyIn":
      case "KeyMatch":
      case "KeyRegex":
      case "KeyCompare": {
        // `some(KEY)` and `every(KEY)` say which elements are meant: nothing to warn of.
        if (!negated || reported.has(expr) || expr.key.output !== undefined || expr.quantifier !== undefined) return;
        const list = listAlong(signature, keyPathSegments(expr.key));
        if (list === undefined) return;
        reported.add(expr);
        const where = signature.origin === "schemas" ? "in the tool schemas" : signature.origin === "corpus" ? "in the runs of the corpus" : "in the trace";
        diagnostics.push(
          diagnostic("V1109", `\`${list}\` holds lists ${where}: negated, \`${printExpr(expr)}\` holds only when no element of the list meets it, which is almost never what is meant`, {
            span: expr.span,
            help: `a condition on a list holds when some element meets it, so \`not\` of it is false on a list with a matching element among others (\`not (tags in {"x"})\` is false on ["x", "y"]); to say that some element is outside the condition, write \`not every(${keyPathText(expr.key)}) …\`; to keep "no element meets it" and say so, write \`not some(${keyPathText(expr.key)}) …\``,
            fix: {
              title: `say "some element does not meet it": \`every(${keyPathText(expr.key)})\``,
              edits: [{ span: expr.key.span, newText: `every(${keyPathText(expr.key)})` }],
            },
          }),
        );
        return;
      }
      default:
        return;
    }
  };
  for (const item of policy.items) {
    if (item.kind !== "RuleDecl") continue;
    const { form, operands, scope } = item.statement;
    // What counts is the polarity in what breaks the rule: for `abs` and the other forms, their
    // patterns as written; for `always Θ`, ¬Θ, so that `always not (… and tags in {"x"})`, the
    // usual way to forbid, is not a negation of the condition.
    for (const operand of operands) visit(operand, form === "always", new Set());
    for (const root of scope === undefined ? [] : [scope.open, ...(scope.close !== undefined ? [scope.close] : [])]) visit(root, false, new Set());
  }
}

/**
 * The first list a key path reads through as a whole, as the policy writes it (`tags`, `items`
 * of `items.id`), when some event of Σ holds a list there; a list the path indexes (`argv.0`) is
 * read one element at a time and does not count.
 */
function listAlong(signature: Signature, segments: readonly (string | number)[]): string | undefined {
  const names: string[] = [];
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!;
    if (typeof segment === "number") continue;
    names.push(segment);
    if (typeof segments[index + 1] === "number") continue;
    const info = signature.keys.get(keyPathId(names));
    if (info === undefined) return undefined;
    if (info.listLength !== undefined) return keyPathDisplayed(segments.slice(0, index + 1));
  }
  return undefined;
}

function checkAtom(expr: Expr, signature: Signature, keyNames: KeyNames, diagnostics: Diagnostic[], budget: SuggestionBudget): void {
  switch (expr.kind) {
    case "ActionIn":
      for (const action of expr.actions) {
        if (signature.actions.has(action.value)) continue;
        const suggestion = suggest(action.value, signature.actions, budget);
        // The replacement must lex as the action name: quoted where the written name was, or where a
        // bare word would not be a name (`until` is a keyword, `git push` has a space).
        const replacement = suggestion === undefined ? undefined : action.quoted ? JSON.stringify(suggestion) : nameText(suggestion);
        diagnostics.push(
          diagnostic(
            "V1101",
            signature.origin === "schemas"
              ? `the action \`${action.value}\` is not one of the tools, so it matches no event`
              : signature.origin === "corpus"
                ? `the action \`${action.value}\` occurs in no run of the corpus, so it matches no event`
                : `the action \`${action.value}\` does not occur in the trace, so it matches no event`,
            {
            span: action.span,
            help:
              suggestion !== undefined
                ? `did you mean \`${suggestion}\`?`
                : `under the closed world a symbol outside the ${signatureName(signature)} denotes the empty set`,
            ...(replacement !== undefined
              ? { fix: { title: `replace with \`${replacement}\``, edits: [{ span: action.span, newText: replacement }] } }
              : {}),
          }),
        );
      }
      return;
    case "KeyIn":
    case "KeyMatch":
    case "KeyBind":
    case "KeyRegex":
    case "KeyContains":
    case "KeyCompare":
    case "KeyCount": {
      // An output's fields are not part of the signature (outputs are text): nothing to compare.
      if (expr.key.output !== undefined) return;
      // A path with list indexes is read through its names (`argv.0` through `argv`): see `lookUpKey`.
      const lookup = lookUpKey(signature, keyPathSegments(expr.key));
      if (!lookup.found) {
        if (lookup.reason === "index") reportMissingIndex(expr.key, lookup, diagnostics, signature);
        else reportUnknownKey(expr.key, signature, keyNames, diagnostics, budget);
        return;
      }
      const info = lookup.info;
      if (expr.kind === "KeyCompare") return reportNeverNumbers(expr, info, signature, diagnostics);
      if (expr.kind !== "KeyIn" || info.openValues === true) return;
      for (const literal of expr.values) {
        if (info.values.has(valueKey(literal.value))) continue;
        // The most common slip is a value of the wrong JSON type: `"6"` where the trace has 6.
        const scalars = scalarsByText(info.values);
        const sameText = scalars.get(String(literal.value));
        // Else a slip of a string value (`"cold-storag"`): the nearest string the runs show under the key.
        const nearText = sameText === undefined && typeof literal.value === "string" ? suggest(literal.value, [...scalars].flatMap(([text, value]) => (typeof value === "string" ? [text] : [])), budget) : undefined;
        const replacement = sameText ?? (nearText !== undefined ? scalars.get(nearText) : undefined);
        const where = signature.origin === "corpus" ? "the corpus" : "the trace";
        diagnostics.push(
          diagnostic("V1103", `the value ${literal.raw} never occurs under \`${keyPathText(expr.key)}\` ${inSignature(signature)}`, {
            span: literal.span,
            help:
              sameText !== undefined
                ? `${where} has ${displayValue(sameText)}: values compare as JSON values, so ${literal.raw} and ${displayValue(sameText)} differ`
                : replacement !== undefined
                  ? `did you mean ${displayValue(replacement)}? (${where} has it under \`${keyPathText(expr.key)}\`)`
                  : "under the closed world such a value matches no event",
            ...(replacement !== undefined
              ? { fix: { title: `replace with ${displayValue(replacement)}`, edits: [{ span: literal.span, newText: displayValue(replacement) }] } }
              : {}),
          }),
        );
      }
      return;
    }
    default:
      return;
  }
}

/**
 * A comparison on a key whose values in Σ are never numbers (nor strings spelling one) is false on
 * every event of the runs Σ was read from (V1110): most often the wrong key (`passengers` for
 * `count(passengers)`, an object for one of its fields).
 */
function reportNeverNumbers(expr: KeyCompare, info: KeyInfo, signature: Signature, diagnostics: Diagnostic[]): void {
  if (info.openValues === true || info.values.size === 0) return;
  for (const value of info.values.values()) if (numberOf(value) !== undefined) return;
  const listed = [...info.values.values()].slice(0, 3).map((value) => shortValue(value));
  diagnostics.push(
    diagnostic("V1110", `the values under \`${keyPathText(expr.key)}\` are never numbers ${inSignature(signature)}, so \`${printExpr(expr)}\` holds on no event`, {
      span: expr.span,
      help: `${signature.origin === "corpus" ? "the corpus has" : signature.origin === "schemas" ? "the schemas give" : "the trace has"} ${listed.join(", ")}${info.values.size > 3 ? ", …" : ""}; a comparison reads numbers, and strings that spell one (\`"150.00"\`)${info.listLength !== undefined ? `; to compare the number of elements, write \`count(${keyPathText(expr.key)}) ${expr.operator} ${expr.number.text}\`` : ""}`,
    }),
  );
}

/** A value as a diagnostic quotes it, cut short. */
function shortValue(value: JsonValue): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}…` : text;
}

/**
 * How many unknown names of one policy get a nearest-name search. Each search reads every name of
 * the signature; a generated policy with thousands of unknown names against a trace with thousands
 * of names would otherwise be quadratic, and past a few the report sums them up anyway.
 */
const SUGGESTIONS_PER_POLICY = 100;

interface SuggestionBudget {
  left: number;
}

function suggest(name: string, known: Iterable<string>, budget: SuggestionBudget): string | undefined {
  if (budget.left <= 0) return undefined;
  budget.left--;
  return closestName(name, known);
}

const scalarIndexes = new WeakMap<object, ReadonlyMap<string, JsonValue>>();

/** A key's scalar values by their text (the first of each), built once per key: no scan per literal. */
function scalarsByText(values: ReadonlyMap<string, JsonValue>): ReadonlyMap<string, JsonValue> {
  let index = scalarIndexes.get(values);
  if (index === undefined) {
    const built = new Map<string, JsonValue>();
    for (const value of values.values()) {
      if (value === null || typeof value === "object") continue;
      const text = String(value);
      if (!built.has(text)) built.set(text, value);
    }
    scalarIndexes.set(values, (index = built));
  }
  return index;
}

/** Σ's keys as a policy spells them (`headers.host`, `"a.b".c`), with their names. */
type KeyNames = ReadonlyMap<string, readonly string[]>;

function reportUnknownKey(key: KeyPath, signature: Signature, keyNames: KeyNames, diagnostics: Diagnostic[], budget: SuggestionBudget): void {
  const written = keyPathText(key);
  const segments = keyPathSegments(key);
  const names = keyPathNames(segments);
  // A quoted number where a list is (`argv."0"`) names a member; the index is written bare.
  const asIndexes = segments.map((segment, index) => (index > 0 && typeof segment === "string" && /^(?:0|[1-9][0-9]{0,8})$/.test(segment) ? Number(segment) : segment));
  let suggestion: string | undefined;
  if (asIndexes.some((segment, index) => segment !== segments[index]) && lookUpKey(signature, asIndexes).found) suggestion = keyPathDisplayed(asIndexes);
  else if (names.length === segments.length) suggestion = suggest(written, keyNames.keys(), budget);
  else {
    // A path with indexes: the nearest key to its names, with the indexes put back in their places
    // when it has as many names (`argvv.0` suggests `argv.0`).
    const near = suggest(names.map(nameText).join("."), keyNames.keys(), budget);
    const nearNames = near === undefined ? undefined : keyNames.get(near);
    if (nearNames !== undefined && nearNames.length === names.length) {
      let next = 0;
      suggestion = keyPathDisplayed(segments.map((segment) => (typeof segment === "number" ? segment : nearNames[next++]!)));
    }
  }
  diagnostics.push(
    diagnostic(
      "V1102",
      `${noEventHas(signature)} an argument \`${written}\`, so a condition on it is false`,
      {
      span: key.span,
      help: suggestion !== undefined ? `did you mean \`${suggestion}\`?` : "under the closed world a condition on an argument an event lacks is false",
      ...(suggestion !== undefined ? { fix: { title: `replace with \`${suggestion}\``, edits: [{ span: key.span, newText: suggestion }] } } : {}),
    }),
  );
}

/** Where Σ was read, as the messages say it: `no event of the trace has`, … */
function noEventHas(signature: Signature): string {
  return signature.origin === "schemas" ? "no tool schema has" : signature.origin === "corpus" ? "no event of any run of the corpus has" : "no event of the trace has";
}

/** Where a value was looked for: `in any run of the corpus`, or `in the trace`. */
function inSignature(signature: Signature): string {
  return signature.origin === "corpus" ? "in any run of the corpus" : "in the trace";
}

/** `trace's signature`, `corpus's signature` (the union of its runs'), `tool schemas' signature`. */
function signatureName(signature: Signature): string {
  return signature.origin === "schemas" ? "tool schemas' signature" : signature.origin === "corpus" ? "signature of the corpus (every run's names together)" : "trace's signature";
}

/** A key path as a policy spells it: names bare or quoted as the printer writes them, indexes as digits. */
function keyPathDisplayed(segments: readonly (string | number)[]): string {
  return segments.map((segment) => (typeof segment === "number" ? String(segment) : nameText(segment))).join(".");
}

/** A path whose names are in Σ, but not the list element it indexes: no list there, or none long enough. */
function reportMissingIndex(key: KeyPath, lookup: Extract<KeyLookup, { reason: "index" }>, diagnostics: Diagnostic[], signature: Signature): void {
  const written = keyPathText(key);
  const list = keyPathDisplayed(lookup.list);
  const where = noEventHas(signature);
  const why =
    lookup.listLength === undefined
      ? `\`${list}\` is never a list`
      : lookup.listLength === 0
        ? `every list under \`${list}\` is empty`
        : `the longest list under \`${list}\` has ${lookup.listLength} ${lookup.listLength === 1 ? "element" : "elements"}`;
  const help =
    lookup.listLength === undefined
      ? `an index picks an element of a list; \`${list}\` reads the value itself`
      : lookup.listLength === 0
        ? "under the closed world a condition on an element no event has is false"
        : `its elements are numbered from 0 to ${lookup.listLength - 1}`;
  diagnostics.push(diagnostic("V1102", `${where} an argument \`${written}\`: ${why}, so a condition on it is false`, { span: key.span, help }));
}

/**
 * The closed-world pass on its own: every policy of a parsed file against a signature. A policy is
 * compiled once and this pass runs per trace (a corpus has one signature per run).
 */
export function checkSignature(file: SourceFile, signature: Signature): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const policy of file.policies) checkAgainstSignature(policy, signature, diagnostics);
  return diagnostics;
}

/**
 * The keys (by keyPathId) whose values the closed-world check reads: those a policy compares with a
 * set of values. A run's signature needs only their values; every other key needs only its name.
 */
export function keysComparedWithSets(file: SourceFile): Set<string> {
  const keys = new Set<string>();
  for (const policy of file.policies) {
    for (const item of policy.items) {
      walkExpressions(declarationExpressions(item), (expr) => {
        // By the names of the path: Σ keeps a list's values under the list's own name.
        if (expr.kind === "KeyIn" && expr.key.output === undefined) keys.add(keyPathId(keyPathNames(keyPathSegments(expr.key))));
      });
    }
  }
  return keys;
}

/** The expressions a declaration holds: a pattern's body, a rule's operands. */
