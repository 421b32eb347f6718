import { diagnostic, type Diagnostic, type Span } from "@vigil/diagnostics";
import { declarationExpressions, walkExpressions, type Item, type PatternDecl, type PolicyDecl, type RuleDecl, type SourceFile } from "@vigil/syntax";

/**
 * Name resolution, the first pass of checking: which declaration every name refers to. It builds
 * the scopes the validation and the lowering use (each policy's patterns and rules) and the symbol
 * table an editor asks (definitions, references, rename), so both read names the same way.
 *
 * Scopes: policies are global to the file; patterns and rules belong to their policy (a pattern
 * reference resolves within its policy only); a variable belongs to the one declaration it appears
 * in (a rule, or a pattern whose body names it).
 */

export type PolicySymbolKind = "policy" | "pattern" | "rule" | "variable";

export interface PolicySymbol {
  readonly kind: PolicySymbolKind;
  readonly name: string;
  /** The policy that declares it (a policy's own name for a policy). */
  readonly policy: string;
  /** For a variable: the rule or pattern it appears in (variables are scoped to one declaration). */
  readonly scope?: string;
  /** The declaration's name; for a variable, its first occurrence. */
  readonly nameSpan: Span;
  /** The whole declaration; for a variable, its first occurrence. */
  readonly span: Span;
  /** Every other occurrence of the name that refers to this symbol, in source order. */
  readonly references: readonly Span[];
  /** The `///` text of the declaration. */
  readonly doc?: string;
}

export interface SymbolOccurrence {
  readonly symbol: PolicySymbol;
  readonly span: Span;
  /** Whether this occurrence is the symbol's declaration (rather than a reference to it). */
  readonly declaration: boolean;
}

export interface SymbolTable {
  /** Every symbol, in the order of their declarations. */
  readonly symbols: readonly PolicySymbol[];
  /** The declaration or reference whose name covers `offset` (its end included, as a cursor after a name is on it). */
  symbolAt(offset: number): SymbolOccurrence | undefined;
}

/** A policy's names: what validation and lowering look names up in. */
export interface PolicyScope {
  readonly declaration: PolicyDecl;
  /** The first declaration of each pattern name (a second one is a V1003 error). */
  readonly patterns: ReadonlyMap<string, PatternDecl>;
  /** The first declaration of each rule name (a second one is a V1002 error). */
  readonly rules: ReadonlyMap<string, RuleDecl>;
}

export interface Resolution {
  readonly scopes: readonly PolicyScope[];
  readonly symbols: SymbolTable;
  /** Names declared twice (V1002, V1003, V1005). A reference to an undeclared pattern is reported when it is lowered. */
  readonly diagnostics: readonly Diagnostic[];
}

export function resolveFile(file: SourceFile): Resolution {
  const diagnostics: Diagnostic[] = [];
  const symbols: MutableSymbol[] = [];
  const occurrences: SymbolOccurrence[] = [];
  const declare = (symbol: MutableSymbol): MutableSymbol => {
    symbols.push(symbol);
    occurrences.push({ symbol, span: symbol.nameSpan, declaration: true });
    return symbol;
  };
  const refer = (symbol: MutableSymbol, span: Span): void => {
    symbol.references.push(span);
    occurrences.push({ symbol, span, declaration: false });
  };

  const scopes: PolicyScope[] = [];
  const firstPolicies = new Map<string, PolicyDecl>();
  for (const policy of file.policies) {
    if (policy.name.recovered !== true) {
      const first = firstPolicies.get(policy.name.text);
      if (first !== undefined) {
        diagnostics.push(
          diagnostic("V1005", `the policy \`${policy.name.text}\` is declared twice in this file`, {
            span: policy.name.span,
            related: [{ message: "first declared here", span: first.name.span }],
            help: "rename one of the policies or merge their rules",
          }),
        );
      } else {
        firstPolicies.set(policy.name.text, policy);
        declare(symbolOf("policy", policy, policy.name.text));
      }
    }
    scopes.push(resolvePolicy(policy, diagnostics, declare, refer));
  }

  occurrences.sort((a, b) => a.span.start - b.span.start);
  return {
    scopes,
    symbols: { symbols, symbolAt: (offset) => occurrenceAt(occurrences, offset) },
    diagnostics,
  };
}

type MutableSymbol = PolicySymbol & { readonly references: Span[] };

function resolvePolicy(
  policy: PolicyDecl,
  diagnostics: Diagnostic[],
  declare: (symbol: MutableSymbol) => MutableSymbol,
  refer: (symbol: MutableSymbol, span: Span) => void,
): PolicyScope {
  const patterns = new Map<string, PatternDecl>();
  const rules = new Map<string, RuleDecl>();
  const patternSymbols = new Map<string, MutableSymbol>();
  for (const item of policy.items) {
    if (item.name.recovered === true) continue;
    const table: Map<string, PatternDecl | RuleDecl> = item.kind === "PatternDecl" ? patterns : rules;
    const first = table.get(item.name.text);
    if (first !== undefined) {
      const what = item.kind === "PatternDecl" ? "pattern" : "rule";
      diagnostics.push(
        diagnostic(item.kind === "PatternDecl" ? "V1003" : "V1002", `the ${what} \`${item.name.text}\` is declared twice in the policy \`${policy.name.text}\``, {
          span: item.name.span,
          related: [{ message: "first declared here", span: first.name.span }],
          help: `give each ${what} its own name`,
        }),
      );
      continue;
    }
    table.set(item.name.text, item);
    const symbol = declare(symbolOf(item.kind === "PatternDecl" ? "pattern" : "rule", item, policy.name.text));
    if (item.kind === "PatternDecl") patternSymbols.set(item.name.text, symbol);
  }

  // References, in source order: pattern names resolve in this policy; variables in their declaration.
  for (const item of policy.items) {
    const variables = new Map<string, MutableSymbol>();
    walkExpressions(declarationExpressions(item), (expr) => {
      if (expr.kind === "PatternRef") {
        if (expr.name.recovered === true) return;
        const symbol = patternSymbols.get(expr.name.text);
        if (symbol !== undefined) refer(symbol, expr.name.span);
      } else if (expr.kind === "KeyBind" || expr.kind === "KeyContains") {
        const name = expr.variable.name;
        const known = variables.get(name);
        if (known !== undefined) refer(known, expr.variable.span);
        else
          variables.set(
            name,
            declare({
              kind: "variable",
              name,
              policy: policy.name.text,
              scope: item.name.text,
              nameSpan: expr.variable.span,
              span: expr.variable.span,
              references: [],
            }),
          );
      }
    });
  }
  return { declaration: policy, patterns, rules };
}

function symbolOf(kind: "policy" | "pattern" | "rule", declaration: PolicyDecl | Item, policy: string): MutableSymbol {
  return {
    kind,
    name: declaration.name.text,
    policy,
    nameSpan: declaration.name.span,
    span: declaration.span,
    references: [],
    ...(declaration.doc !== undefined ? { doc: declaration.doc.text } : {}),
  };
}

/** The occurrence covering `offset`, by binary search over occurrences sorted by start (names never overlap). */
function occurrenceAt(occurrences: readonly SymbolOccurrence[], offset: number): SymbolOccurrence | undefined {
  let low = 0;
  let high = occurrences.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (occurrences[middle]!.span.start <= offset) {
      found = middle;
      low = middle + 1;
    } else high = middle - 1;
  }
  const candidate = occurrences[found];
  return candidate !== undefined && offset <= candidate.span.end ? candidate : undefined;
}
