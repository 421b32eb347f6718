import { closestName, diagnostic, type Diagnostic } from "@vigil/diagnostics";
import { declarationExpressions, keyPathText, nameText, walkExpressions, type Expr, type KeyPath, type PolicyDecl, type SourceFile } from "@vigil/syntax";
import { displayValue, keyPathId, valueKey, type JsonValue, type Signature } from "@vigil/trace";

/**
 * Reports the symbols of a policy that the trace's signature Σ = (A, K, V) does not contain. By the
 * closed world (Section 5.1), such a symbol denotes the empty set and a condition on it is false;
 * that is legal but usually a misspelling, so actions and keys get a warning with the nearest known
 * name, and values an informational note.
 */
export function checkAgainstSignature(policy: PolicyDecl, signature: Signature, diagnostics: Diagnostic[]): void {
  // Key paths as a policy spells them, so that a suggestion is also a valid replacement.
  const keyNames = [...signature.keys.values()].map((info) => info.segments.map(nameText).join("."));
  const budget: SuggestionBudget = { left: SUGGESTIONS_PER_POLICY };
  for (const item of policy.items) {
    walkExpressions(declarationExpressions(item), (expr) => checkAtom(expr, signature, keyNames, diagnostics, budget));
  }
}

function checkAtom(expr: Expr, signature: Signature, keyNames: string[], diagnostics: Diagnostic[], budget: SuggestionBudget): void {
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
      const info = signature.keys.get(keyPathId(expr.key.segments.map((s) => s.name)));
      if (info === undefined) {
        reportUnknownKey(expr.key, keyNames, diagnostics, signature.origin === "schemas", budget);
        return;
      }
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

function reportUnknownKey(key: KeyPath, keyNames: string[], diagnostics: Diagnostic[], fromSchemas: boolean, budget: SuggestionBudget): void {
  const written = keyPathText(key);
  const suggestion = suggest(written, keyNames, budget);
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
        if (expr.kind === "KeyIn" && expr.key.output === undefined) keys.add(keyPathId(expr.key.segments.map((segment) => segment.name)));
      });
    }
  }
  return keys;
}

/** The expressions a declaration holds: a pattern's body, a rule's operands. */
