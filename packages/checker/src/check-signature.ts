import { closestName, diagnostic, type Diagnostic } from "@vigil/diagnostics";
import { declarationExpressions, keyPathSegments, keyPathText, nameText, walkExpressions, type Expr, type KeyPath, type PolicyDecl, type SourceFile } from "@vigil/syntax";
import { displayValue, keyPathId, keyPathNames, lookUpKey, valueKey, type JsonValue, type KeyLookup, type Signature } from "@vigil/trace";

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
              : `the action \`${action.value}\` does not occur in the trace, so it matches no event`,
            {
            span: action.span,
            help:
              suggestion !== undefined
                ? `did you mean \`${suggestion}\`?`
                : "under the closed world a symbol outside the trace's signature denotes the empty set",
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
    case "KeyContains": {
      // An output's fields are not part of the signature (outputs are text): nothing to compare.
      if (expr.key.output !== undefined) return;
      // A path with list indexes is read through its names (`argv.0` through `argv`): see `lookUpKey`.
      const lookup = lookUpKey(signature, keyPathSegments(expr.key));
      if (!lookup.found) {
        if (lookup.reason === "index") reportMissingIndex(expr.key, lookup, diagnostics, signature.origin === "schemas");
        else reportUnknownKey(expr.key, signature, keyNames, diagnostics, budget);
        return;
      }
      const info = lookup.info;
      if (expr.kind !== "KeyIn" || info.openValues === true) return;
      for (const literal of expr.values) {
        if (info.values.has(valueKey(literal.value))) continue;
        // The most common slip is a value of the wrong JSON type: `"6"` where the trace has 6.
        const sameText = scalarsByText(info.values).get(String(literal.value));
        diagnostics.push(
          diagnostic("V1103", `the value ${literal.raw} never occurs under \`${keyPathText(expr.key)}\` in the trace`, {
            span: literal.span,
            help:
              sameText !== undefined
                ? `the trace has ${displayValue(sameText)}: values compare as JSON values, so ${literal.raw} and ${displayValue(sameText)} differ`
                : "under the closed world such a value matches no event",
            ...(sameText !== undefined
              ? { fix: { title: `replace with ${displayValue(sameText)}`, edits: [{ span: literal.span, newText: displayValue(sameText) }] } }
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
  const fromSchemas = signature.origin === "schemas";
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
      fromSchemas
        ? `no tool schema has an argument \`${written}\`, so a condition on it is false`
        : `no event of the trace has an argument \`${written}\`, so a condition on it is false`,
      {
      span: key.span,
      help: suggestion !== undefined ? `did you mean \`${suggestion}\`?` : "under the closed world a condition on an argument an event lacks is false",
      ...(suggestion !== undefined ? { fix: { title: `replace with \`${suggestion}\``, edits: [{ span: key.span, newText: suggestion }] } } : {}),
    }),
  );
}

/** A key path as a policy spells it: names bare or quoted as the printer writes them, indexes as digits. */
function keyPathDisplayed(segments: readonly (string | number)[]): string {
  return segments.map((segment) => (typeof segment === "number" ? String(segment) : nameText(segment))).join(".");
}

/** A path whose names are in Σ, but not the list element it indexes: no list there, or none long enough. */
function reportMissingIndex(key: KeyPath, lookup: Extract<KeyLookup, { reason: "index" }>, diagnostics: Diagnostic[], fromSchemas: boolean): void {
  const written = keyPathText(key);
  const list = keyPathDisplayed(lookup.list);
  const where = fromSchemas ? "no tool schema has" : "no event of the trace has";
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
