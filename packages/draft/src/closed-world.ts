import { checkAgainstSignature, closestName, ruleId, type CompiledPolicy, type Diagnostic, type Signature, type SourceFile, type Span } from "@vigil/compiler";
import { namedIn } from "./names.js";
import { citedText, type SpecSource } from "./spec.js";
import { pathText } from "./vocabulary-text.js";
import { pathId, type ActionVocabulary, type Vocabulary } from "./vocabulary.js";

/**
 * The closed world of a draft, as a question rather than a verdict. A name no run shows (an action,
 * an argument key, an output path) matches no event of the runs: usually a slip, or a name the
 * model made up, and then the rule is sent back. But a prohibition names exactly what good runs do
 * not do ("at most five passengers" where no run has six), so such a name inside a prohibition
 * (`abs`, `always not (…)`) or a limit is kept when the lines the rule cites name it (`namedIn`),
 * and marked for review (a `/// review:` line above it, and a line of the report). A near-miss of a
 * known name is sent back as a likely typo first. A key written on actions that never have it
 * (`action in {A} and KEY …`), and an output path no output of the actions has, are found from the
 * per-action vocabulary; the first is always sent back, with the actions that have the key.
 */

type PolicyDecl = SourceFile["policies"][number];
type Item = PolicyDecl["items"][number];
type RuleDecl = Extract<Item, { kind: "RuleDecl" }>;
type Expr = RuleDecl["statement"]["operands"][number];
type KeyPath = Extract<Expr, { kind: "KeyIn" }>["key"];

/** What the closed world is checked against: the runs' signature, their vocabulary per action, and the specification the rules cite. */
export interface World {
  readonly signature: Signature;
  readonly vocabulary?: Vocabulary;
  readonly sources: readonly SpecSource[];
}

/** A name kept for review: the declaration it is in, and the line saying why. */
export interface Review {
  readonly policy: string;
  readonly item: string;
  readonly kind: Item["kind"];
  readonly line: string;
}

export interface ClosedWorld {
  /** Problems for the model, at their place in the text. */
  readonly problems: readonly { readonly start?: number; readonly text: string }[];
  readonly reviews: readonly Review[];
  /** The closed world's notes that stay notes (values no run shows). */
  readonly notes: readonly Diagnostic[];
}

/** Where a name is written: its declaration, whether that is a prohibition, the actions of its conjunction. */
interface Place {
  readonly policy: string;
  readonly item: Item;
  readonly prohibition: boolean;
  /** The lines the declaration cites (a pattern: those of the rules that use it), joined. */
  readonly cited: string;
  readonly citations: readonly string[];
}

interface NameAt {
  readonly kind: "action" | "key" | "value";
  readonly place: Place;
  readonly span: Span;
  /** The action, the value as written, or the key's names (its indexes left out). */
  readonly names: readonly string[];
  readonly written: string;
  readonly output?: boolean;
  /** For a key: the actions of the conjunction it is in (`action in {A, …} and KEY …`). */
  readonly actions?: ReadonlySet<string>;
}

export function closedWorld(compiled: CompiledPolicy, text: string, world: World): ClosedWorld {
  const lines = text.split("\n");
  const at = (span: Span) => `line ${span.line}:${span.column}: `;
  const inLine = (span: Span) => ` (in \`${lines[span.line - 1]?.trim() ?? ""}\`)`;
  const names = namesOf(compiled.syntax, world.sources);
  const problems: { start?: number; text: string }[] = [];
  const reviews: Review[] = [];
  const notes: Diagnostic[] = [];
  const review = (name: NameAt, what: string) =>
    reviews.push({ policy: name.place.policy, item: name.place.item.name.text, kind: name.place.item.kind, line: `review: no run shows ${what}; kept because ${name.place.citations.join(", ")} ${name.place.citations.length === 1 ? "names" : "name"} it (a prohibition names what good runs do not do)` });
  /** An unseen name: a likely typo, kept for review, or sent back. */
  const question = (name: NameAt, what: string, said: string, typo: string | undefined) => {
    if (typo !== undefined) return problems.push({ start: name.span.start, text: `${at(name.span)}${said}: probably a typo of \`${typo}\`${inLine(name.span)}` });
    const word = name.kind === "action" ? name.written : name.names.join(".");
    if (name.place.prohibition && namedIn(word, name.place.cited)) return review(name, what);
    const why = !name.place.prohibition
      ? "no run shows it (only a prohibition or a limit may name what no run shows, where the lines it cites name it); use a name of the vocabulary"
      : name.place.citations.length > 0
        ? `no run shows it, and the lines the prohibition cites (${name.place.citations.join(", ")}) do not name it; use a name of the vocabulary, or cite the line that names it`
        : "no run shows it, and the prohibition cites no line; use a name of the vocabulary, or cite the line that names it";
    problems.push({ start: name.span.start, text: `${at(name.span)}${said}${inLine(name.span)}: ${why}, or put the requirement in the unsupported block with why` });
  };
  for (const d of checkAgainstSignature(compiled, world.signature)) {
    const name = d.span === undefined ? undefined : names.get(d.span.start);
    if (name !== undefined && (d.code === "V1101" || d.code === "V1102")) {
      const suggested = d.fix?.edits[0]?.newText;
      const what = d.code === "V1101" ? `the action \`${name.written}\`` : `the argument \`${name.written}\``;
      question(name, what, `${d.code}: ${d.message}`, suggested);
      continue;
    }
    if (name !== undefined && d.code === "V1103" && name.place.prohibition && namedIn(name.names[0]!, name.place.cited)) {
      review(name, `the value ${name.written}`);
      continue;
    }
    if (d.severity === "info") notes.push(d);
    else problems.push({ ...(d.span !== undefined ? { start: d.span.start } : {}), text: `${d.span !== undefined ? at(d.span) : ""}${d.code}: ${d.message}${d.span !== undefined ? inLine(d.span) : ""}` });
  }
  if (world.vocabulary !== undefined) {
    const byAction = new Map(world.vocabulary.actions.map((action) => [action.action, action]));
    for (const name of names.values()) {
      if (name.kind !== "key") continue;
      if (name.output === true) checkOutputPath(name, byAction, question);
      else {
        const wrong = wrongAction(name, byAction);
        if (wrong !== undefined) problems.push({ start: name.span.start, text: `${at(name.span)}${wrong}${inLine(name.span)}` });
      }
    }
  }
  return { problems, reviews, notes };
}

/** A key the runs show, written on actions none of whose events has it: why, with the actions that have it and the keys those actions have. */
function wrongAction(name: NameAt, byAction: ReadonlyMap<string, ActionVocabulary>): string | undefined {
  const actions = [...(name.actions ?? [])].flatMap((action) => byAction.get(action) ?? []);
  if (actions.length === 0 || actions.some((action) => action.argsCut === true) || name.names.length === 0) return undefined;
  const id = pathId(name.names);
  const has = (action: ActionVocabulary) => action.args.some((path) => pathId(path.path) === id);
  if (actions.some(has)) return undefined;
  const others = [...byAction.values()].filter(has).map((action) => `\`${action.action}\``);
  // A key no action has is the compiler's V1102.
  if (others.length === 0) return undefined;
  const listed = actions.map((action) => `\`${action.action}\` has ${keysOf(action)}`).join("; ");
  return `no event of ${actions.map((action) => `\`${action.action}\``).join(" or ")} has an argument \`${name.written}\`, so the condition is false on them: the runs show it on ${others.join(", ")}; ${listed}`;
}

/** An action's argument keys, as a list for a problem (at most 30). */
function keysOf(action: ActionVocabulary): string {
  if (action.args.length === 0) return "no arguments";
  const keys = action.args.slice(0, 30).map((path) => pathText(path.path));
  return `${keys.join(", ")}${action.args.length > 30 ? `, … (${action.args.length} in all)` : ""}`;
}

/**
 * `output.PATH` on actions whose outputs are never a JSON object with PATH: a name no run shows
 * (asked as the other unseen names are). Actions without any output are not judged: the runs may
 * not have recorded them.
 */
function checkOutputPath(
  name: NameAt,
  byAction: ReadonlyMap<string, ActionVocabulary>,
  question: (name: NameAt, what: string, said: string, typo: string | undefined) => unknown,
): void {
  if (name.names.length === 0) return;
  const written = name.actions !== undefined ? [...name.actions].flatMap((action) => byAction.get(action) ?? []) : [...byAction.values()].filter((action) => !action.message);
  const actions = written.filter((action) => action.outputs > 0);
  if (actions.length === 0 || actions.some((action) => action.outputPathsCut === true)) return;
  const id = pathId(name.names);
  if (actions.some((action) => action.outputPaths.some((path) => pathId(path.path) === id))) return;
  const known = [...new Set(actions.flatMap((action) => action.outputPaths.map((path) => pathText(path.path, true))))];
  const whose = name.actions !== undefined ? actions.map((action) => `\`${action.action}\``).join(" or ") : "any action";
  const typo = known.length > 0 ? closestName(name.written, known) : undefined;
  const shown = typo !== undefined ? "" : known.length === 0 ? " (their outputs are never JSON objects: `output` alone is the text)" : ` (their JSON outputs have ${known.slice(0, 30).join(", ")}${known.length > 30 ? ", …" : ""})`;
  question(name, `the output path \`${name.written}\``, `no output of ${whose} has \`${name.written}\`, so the condition is false on them${shown}`, typo);
}

/**
 * Every action, key and value a draft names, by where it starts, each with its place: the
 * declaration, whether it is a prohibition (through a pattern: every rule using the pattern is
 * one), and the actions of the conjunction a key is in.
 */
function namesOf(file: SourceFile, sources: readonly SpecSource[]): Map<number, NameAt> {
  const found = new Map<number, NameAt>();
  for (const policy of file.policies) {
    const uses = patternUses(policy);
    for (const item of policy.items) {
      if (item.kind === "RuleDecl") {
        const citations = citationOf(item);
        const place = (prohibition: boolean): Place => ({ policy: policy.name.text, item, prohibition, cited: citedOf(sources, citations), citations });
        const operands = place(isProhibition(item));
        for (const operand of item.statement.operands) collect(operand, operands, found);
        const scope = item.statement.scope;
        for (const root of scope === undefined ? [] : [scope.open, ...(scope.close !== undefined ? [scope.close] : [])]) collect(root, place(false), found);
      } else {
        const use = uses.get(item.name.text);
        const citations = use?.citations ?? [];
        collect(item.body, { policy: policy.name.text, item, prohibition: use !== undefined && use.all > 0 && use.all === use.prohibitions, cited: citedOf(sources, citations), citations }, found);
      }
    }
  }
  return found;
}

/** A prohibition or a limit: what its operands name is what good runs do not do (or do at most so often). */
function isProhibition(rule: RuleDecl): boolean {
  const { form, operands } = rule.statement;
  return form === "abs" || form === "limit" || (form === "always" && operands.length === 1 && operands[0]!.kind === "Not");
}

/** The rule's `/// source:` citation. */
function citationOf(rule: Item): string[] {
  const lines = (rule.doc?.text ?? "").split("\n");
  const source = lines.findLast((line) => /^\s*source:\s*\S/i.test(line));
  return source === undefined ? [] : [source.replace(/^\s*source:\s*/i, "").trim()];
}

function citedOf(sources: readonly SpecSource[], citations: readonly string[]): string {
  return citations.map((citation) => citedText(sources, citation) ?? "").join("\n");
}

/** For each pattern: how many rules use it (through other patterns too), how many of them are prohibitions, and their citations. */
function patternUses(policy: PolicyDecl): Map<string, { all: number; prohibitions: number; citations: string[] }> {
  const bodies = new Map<string, Expr>();
  for (const item of policy.items) if (item.kind === "PatternDecl" && !bodies.has(item.name.text)) bodies.set(item.name.text, item.body);
  const uses = new Map<string, { all: number; prohibitions: number; citations: string[] }>();
  for (const item of policy.items) {
    if (item.kind !== "RuleDecl") continue;
    const scope = item.statement.scope;
    const roots: [Expr, boolean][] = [...item.statement.operands.map((operand): [Expr, boolean] => [operand, isProhibition(item)]), ...(scope === undefined ? [] : [scope.open, ...(scope.close !== undefined ? [scope.close] : [])]).map((root): [Expr, boolean] => [root, false])];
    for (const [root, prohibition] of roots) {
      for (const name of referenced(root, bodies)) {
        const use = uses.get(name) ?? { all: 0, prohibitions: 0, citations: [] };
        use.all++;
        if (prohibition) use.prohibitions++;
        for (const citation of citationOf(item)) if (!use.citations.includes(citation)) use.citations.push(citation);
        uses.set(name, use);
      }
    }
  }
  return uses;
}

/** The patterns an expression refers to, and those they refer to in turn. */
function referenced(root: Expr, bodies: ReadonlyMap<string, Expr>): Set<string> {
  const names = new Set<string>();
  const stack: Expr[] = [root];
  while (stack.length > 0) {
    const expr = stack.pop()!;
    if (expr.kind === "PatternRef") {
      const body = bodies.get(expr.name.text);
      if (!names.has(expr.name.text) && body !== undefined) stack.push(body);
      names.add(expr.name.text);
    } else stack.push(...children(expr));
  }
  return names;
}

function children(expr: Expr): Expr[] {
  switch (expr.kind) {
    case "And":
    case "Or":
      return [...expr.operands];
    case "Not":
    case "Once":
    case "Eventually":
      return [expr.operand];
    case "Implies":
      return [expr.left, expr.right];
    default:
      return [];
  }
}

/**
 * The names under an expression, each with its place; a key with the actions of the conjunction it
 * is in. A conjunction's actions are those of its `action in {…}` operands (all of them: the event
 * is one), or of an `or` of them; `once` and `eventually` speak of other events, and start afresh.
 */
function collect(root: Expr, place: Place, found: Map<number, NameAt>): void {
  const stack: { expr: Expr; actions?: ReadonlySet<string> }[] = [{ expr: root }];
  while (stack.length > 0) {
    const { expr, actions } = stack.pop()!;
    switch (expr.kind) {
      case "And": {
        let narrowed = actions;
        for (const operand of expr.operands) {
          const named = actionsOf(operand);
          if (named !== undefined) narrowed = narrowed === undefined ? named : new Set([...narrowed].filter((action) => named.has(action)));
        }
        for (const operand of expr.operands) stack.push({ expr: operand, ...(narrowed !== undefined ? { actions: narrowed } : {}) });
        break;
      }
      case "Or":
      case "Not":
      case "Implies":
        for (const child of children(expr)) stack.push({ expr: child, ...(actions !== undefined ? { actions } : {}) });
        break;
      case "Once":
      case "Eventually":
        stack.push({ expr: expr.operand });
        break;
      case "ActionIn":
        for (const action of expr.actions) found.set(action.span.start, { kind: "action", place, span: action.span, names: [action.value], written: action.value });
        break;
      case "KeyIn":
        for (const value of expr.values) found.set(value.span.start, { kind: "value", place, span: value.span, names: [typeof value.value === "string" ? value.value : value.raw], written: value.raw });
        addKey(expr.key, place, actions, found);
        break;
      case "KeyMatch":
      case "KeyBind":
      case "KeyRegex":
      case "KeyContains":
      case "KeyCompare":
      case "KeyCount":
        addKey(expr.key, place, actions, found);
        break;
      default:
        break;
    }
  }
}

function addKey(key: KeyPath, place: Place, actions: ReadonlySet<string> | undefined, found: Map<number, NameAt>): void {
  const names = key.segments.flatMap((segment) => ("index" in segment ? [] : [segment.name]));
  const written = (key.output !== undefined ? ["output"] : []).concat(key.segments.map((segment) => ("index" in segment ? String(segment.index) : /^[A-Za-z_][A-Za-z0-9_]*$/.test(segment.name) ? segment.name : JSON.stringify(segment.name)))).join(".");
  found.set(key.span.start, { kind: "key", place, span: key.span, names, written, ...(key.output !== undefined ? { output: true } : {}), ...(actions !== undefined ? { actions } : {}) });
}

/** The actions an operand of a conjunction requires: `action in {…}`, or an `or` of such. */
function actionsOf(expr: Expr): ReadonlySet<string> | undefined {
  if (expr.kind === "ActionIn") return new Set(expr.actions.map((action) => action.value));
  if (expr.kind !== "Or") return undefined;
  const all = new Set<string>();
  for (const operand of expr.operands) {
    const named = actionsOf(operand);
    if (named === undefined) return undefined;
    for (const action of named) all.add(action);
  }
  return all;
}

/** `POLICY.NAME` of a review's declaration. */
export function reviewedName(review: Review): string {
  return ruleId({ policy: review.policy, name: review.item });
}
