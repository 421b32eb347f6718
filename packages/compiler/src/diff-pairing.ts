import { ruleId, type CheckedStatement } from "@vigil/checker";

/**
 * Which rules of two versions of a policy `vigilc diff` compares with which. By name (`POLICY.RULE`),
 * for an edit of one file; or by source, for two policies written apart from one specification (a
 * drafted one and a hand-written one), whose rules share no names but cite the specification's
 * lines the way `vigilc draft` makes every rule cite them: a `///` line `source: NAME:LINE` (or
 * `NAME:FIRST-LAST`). By source, an old rule and a new one are a couple when they cite
 * overlapping lines of the same file; a rule may be in several couples, and each is compared. Rules
 * linked through couples (one rule of a version, two of the other) are compared together as well.
 * A rule in no couple is `removed` or `added`, compared with no rule, as by name.
 */

export type RulePairing = "name" | "source";

/** Lines of a specification a rule cites. */
export interface Citation {
  /** The file as the rule names it (`airline-policy.md`, `../shared/data/tau-bench/airline-policy.md`). */
  readonly file: string;
  readonly first: number;
  readonly last: number;
}

/** One comparison of a diff: the old version's rules against the new one's. */
export interface RulePair {
  /** How it is shown: `POLICY.RULE` by name or for a rule in no couple; `OLD ↔ NEW` for a couple; `OLD + OLD ↔ NEW` for rules compared together. */
  readonly rule: string;
  readonly old: readonly CheckedStatement[];
  readonly new: readonly CheckedStatement[];
  /** By source: what the rules compared cite in common (a couple, rules together), or what a rule in no couple cites (`FILE:LINE`, `FILE:FIRST-LAST`). */
  readonly cites?: readonly string[];
  /** By source: a couple, the rules of couples that share rules compared together, or a rule in no couple. */
  readonly kind?: "couple" | "together" | "unpaired";
}

/**
 * The lines a rule's `///` text cites: each line `source: NAME:LINE` or `source: NAME:FIRST-LAST`,
 * several citations on one line separated by commas (a hand-written rule may cite two places).
 */
export function citationsOf(doc: string | undefined): Citation[] {
  const citations: Citation[] = [];
  for (const line of (doc ?? "").split("\n")) {
    const source = /^\s*source:\s*(.+)$/i.exec(line);
    if (source === null) continue;
    for (const part of source[1]!.split(",")) {
      const match = /^(.+?):(\d+)(?:\s*[-–]\s*(\d+))?$/.exec(part.trim());
      if (match === null) continue;
      const [first, last] = [Number(match[2]), Number(match[3] ?? match[2])];
      if (last >= first) citations.push({ file: match[1]!.trim(), first, last });
    }
  }
  return citations;
}

/** A citation as it is written: `FILE:LINE` or `FILE:FIRST-LAST`. */
export function citationText(citation: Citation): string {
  return `${citation.file}:${citation.first}${citation.last === citation.first ? "" : `-${citation.last}`}`;
}

/** A file name's path segments, without `.` and `..` and a `#section`. */
function segmentsOf(file: string): string[] {
  return file
    .replace(/#.*$/, "")
    .split(/[\\/]+/)
    .filter((segment) => segment !== "" && segment !== "." && segment !== "..");
}

/**
 * Whether two citations name the same file: the same path, or one path the end of the other
 * (`airline-policy.md` and `../shared/data/tau-bench/airline-policy.md`), since a draft cites a
 * specification by the path it was given, from wherever it was run.
 */
export function sameFile(a: string, b: string): boolean {
  const [x, y] = [segmentsOf(a), segmentsOf(b)];
  const [short, long] = x.length <= y.length ? [x, y] : [y, x];
  return short.length > 0 && short.every((segment, i) => segment === long[long.length - short.length + i]);
}

/** The lines two citations share (named by the shorter of their two names), if any. */
export function sharedLines(a: Citation, b: Citation): Citation | undefined {
  if (!sameFile(a.file, b.file)) return undefined;
  const [first, last] = [Math.max(a.first, b.first), Math.min(a.last, b.last)];
  if (first > last) return undefined;
  return { file: segmentsOf(a.file).length <= segmentsOf(b.file).length ? a.file : b.file, first, last };
}

/** Every rule by name: the rules of each version named `POLICY.RULE`, in the order they first occur. */
export function pairByName(old: readonly CheckedStatement[], next: readonly CheckedStatement[]): RulePair[] {
  const names = [...new Set([...old, ...next].map(ruleId))];
  return names.map((rule) => ({ rule, old: old.filter((s) => ruleId(s) === rule), new: next.filter((s) => ruleId(s) === rule) }));
}

/**
 * Every rule by the lines it cites. Shown in the old version's order: each old rule in no couple
 * (`removed`) where it stands, or, the first time one of its couples is reached, every couple of
 * the rules linked with it, each old rule's couples in the new version's order, then those rules
 * together when there are more than two; then the new rules in no couple (`added`). No couple is
 * preferred to another: overlapping lines pair, however many.
 */
export function pairBySource(old: readonly CheckedStatement[], next: readonly CheckedStatement[]): RulePair[] {
  const oldCites = old.map((s) => citationsOf(s.doc));
  const newCites = next.map((s) => citationsOf(s.doc));
  const couples: { o: number; n: number; shared: Citation[] }[] = [];
  old.forEach((_, o) =>
    next.forEach((_, n) => {
      const shared = oldCites[o]!.flatMap((a) => newCites[n]!.flatMap((b) => sharedLines(a, b) ?? []));
      if (shared.length > 0) couples.push({ o, n, shared });
    }),
  );
  // The rules linked through couples: a component of the graph whose edges are couples.
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    const up = parent.get(x) ?? x;
    if (up === x) return x;
    const root = find(up);
    parent.set(x, root);
    return root;
  };
  for (const { o, n } of couples) parent.set(find(`o${o}`), find(`n${n}`));
  const pairs: RulePair[] = [];
  const shown = new Set<string>();
  const texts = (citations: readonly Citation[]) => [...new Set(citations.map(citationText))];
  old.forEach((statement, o) => {
    const own = couples.filter((c) => c.o === o);
    if (own.length === 0) {
      pairs.push({ rule: ruleId(statement), old: [statement], new: [], cites: texts(oldCites[o]!), kind: "unpaired" });
      return;
    }
    const component = find(`o${o}`);
    if (shown.has(component)) return;
    shown.add(component);
    const linked = couples.filter((c) => find(`o${c.o}`) === component);
    for (const c of linked) pairs.push({ rule: `${ruleId(old[c.o]!)} ↔ ${ruleId(next[c.n]!)}`, old: [old[c.o]!], new: [next[c.n]!], cites: texts(c.shared), kind: "couple" });
    if (linked.length > 1) {
      const olds = [...new Set(linked.map((c) => c.o))].sort((a, b) => a - b).map((k) => old[k]!);
      const news = [...new Set(linked.map((c) => c.n))].sort((a, b) => a - b).map((k) => next[k]!);
      pairs.push({ rule: `${olds.map(ruleId).join(" + ")} ↔ ${news.map(ruleId).join(" + ")}`, old: olds, new: news, cites: texts(linked.flatMap((c) => c.shared)), kind: "together" });
    }
  });
  next.forEach((statement, n) => {
    if (!couples.some((c) => c.n === n)) pairs.push({ rule: ruleId(statement), old: [], new: [statement], cites: texts(newCites[n]!), kind: "unpaired" });
  });
  return pairs;
}

/** Whether any rule cites a line of a specification. */
export function citesSources(statements: readonly CheckedStatement[]): boolean {
  return statements.some((s) => citationsOf(s.doc).length > 0);
}

/**
 * The pairing `vigilc diff` chooses on its own: by source when no rule of one version has the name
 * (`POLICY.RULE`) of a rule of the other and both versions cite specification lines; else by name.
 */
export function automaticPairing(old: readonly CheckedStatement[], next: readonly CheckedStatement[]): RulePairing {
  const names = new Set(old.map(ruleId));
  if (next.some((s) => names.has(ruleId(s)))) return "name";
  return citesSources(old) && citesSources(next) ? "source" : "name";
}

/** Whether a pair compares the rule `name` (`NAME` or `POLICY.NAME`) on either side. */
export function pairHasRule(pair: RulePair, name: string): boolean {
  return [...pair.old, ...pair.new].some((s) => s.name === name || ruleId(s) === name);
}
