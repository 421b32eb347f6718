import type { Form, RuleResponse, ScopeKind } from "@vigil/syntax";

/**
 * What each statement form means, in the words of docs/language.md ("holds when") and
 * docs/semantics.md (Figure 5: the requirement R_φ(e) on every event e, and its reading). Hovers and
 * signature help show these; a test checks that every text still appears in those documents.
 */
export interface FormDescription {
  readonly form: Form;
  /** The form's name in Figure 5. */
  readonly figureName: string;
  /** docs/language.md: when the statement holds. */
  readonly holdsWhen: string;
  /** docs/semantics.md: the requirement on each event. */
  readonly requirement: string;
  /** docs/semantics.md: the requirement read aloud. */
  readonly reading: string;
  /** The call as signature help shows it, and its parameters (each a substring of `label`). */
  readonly label: string;
  readonly parameters: readonly { readonly label: string; readonly documentation: string }[];
  /** The snippet completion inserts. */
  readonly snippet: string;
}

export const formDescriptions: Readonly<Record<Form, FormDescription>> = {
  abs: {
    form: "abs",
    figureName: "Abs",
    holdsWhen: "no event matches ψ (absence)",
    requirement: "¬ψ(e)",
    reading: "no event matches ψ",
    label: "abs(ψ never matches)",
    parameters: [{ label: "ψ never matches", documentation: "the pattern no event of the trace may match" }],
    snippet: "abs(${1:ψ})",
  },
  prec: {
    form: "prec",
    figureName: "Prec",
    holdsWhen: "every event matching ψ has an earlier event matching ψ' (precedence)",
    requirement: "ψ(e) ⇒ ⋁_{e′ ≺ e} ψ′(e′)",
    reading: "each ψ-event has an earlier ψ′-event",
    label: "prec(ψ trigger, ψ' required before)",
    parameters: [
      { label: "ψ trigger", documentation: "the events that need a precedent" },
      { label: "ψ' required before", documentation: "what must have happened at some earlier event" },
    ],
    snippet: "prec(${1:ψ}, ${2:ψ'})",
  },
  resp: {
    form: "resp",
    figureName: "Resp",
    holdsWhen: "every event matching ψ has a later event matching ψ' (response)",
    requirement: "ψ(e) ⇒ ⋁_{e′ ≻ e} ψ′(e′)",
    reading: "each ψ-event has a later ψ′-event",
    label: "resp(ψ trigger, ψ' required after)",
    parameters: [
      { label: "ψ trigger", documentation: "the events that need a response" },
      { label: "ψ' required after", documentation: "what must happen at some later event" },
    ],
    snippet: "resp(${1:ψ}, ${2:ψ'})",
  },
  bresp: {
    form: "bresp",
    figureName: "BResp",
    holdsWhen: "every event matching ψ has an event matching ψ' among the next N events (bounded response; N ≥ 1)",
    requirement: "ψ(e) ⇒ ⋁_{e ≺ₗ e′} ψ′(e′)",
    reading: "each ψ-event has a ψ′-event among the next ℓ events",
    label: "bresp[N](ψ trigger, ψ' required within N events)",
    parameters: [
      { label: "ψ trigger", documentation: "the events that need a response" },
      { label: "ψ' required within N events", documentation: "what must happen among the next N events (or, with a duration such as `5m`, at most that long after)" },
    ],
    snippet: "bresp[${1:1}](${2:ψ}, ${3:ψ'})",
  },
  rslv: {
    form: "rslv",
    figureName: "Rslv",
    holdsWhen: "every event matching ψ is resolved: it matches ψ' itself, or a later event matches ψ' or ψ (resolution)",
    requirement: "ψ(e) ⇒ ψ′(e) ∨ ⋁_{e′ ≻ e} (ψ′(e′) ∨ ψ(e′))",
    reading: "each ψ-event is resolved at itself or later, or superseded by a later ψ-event",
    label: "rslv(ψ trigger, ψ' resolution)",
    parameters: [
      { label: "ψ trigger", documentation: "the events that need to be resolved" },
      { label: "ψ' resolution", documentation: "what resolves them, at the same event or later" },
    ],
    snippet: "rslv(${1:ψ}, ${2:ψ'})",
  },
  until: {
    form: "until",
    figureName: "Until",
    holdsWhen:
      "after every event matching ψ (the trigger), no event matches ψb (bad) unless an event matching ψ' (resolution) came first, strictly between them",
    requirement: "ψ(e) ⇒ ⋀_{eb ≻ e} (ψb(eb) ⇒ ⋁_{e ≺ ec ≺ eb} ψ′(ec))",
    reading: "after each trigger, every bad event is preceded by a resolution strictly after the trigger",
    label: "until(ψ trigger, ψ' resolution, ψb bad)",
    parameters: [
      { label: "ψ trigger", documentation: "the events that open an interval" },
      { label: "ψ' resolution", documentation: "what closes the interval" },
      { label: "ψb bad", documentation: "what must not happen before the resolution" },
    ],
    snippet: "until(${1:ψ}, ${2:ψ'}, ${3:ψb})",
  },
  limit: {
    form: "limit",
    figureName: "Limit",
    holdsWhen: "at most N events match ψ (a limit; per value of each variable ψ binds)",
    requirement: "ψ(e, ν) ⇒ Σ_{e′ ∈ W(e), ψ(e′, ν)} a(e′) ≤ M",
    reading: "no ψ-event takes the measure of its binding over the maximum",
    label: "limit[N per D](ψ counted)",
    parameters: [{ label: "ψ counted", documentation: "the events counted: at most N of them (in any window of length D, with `per D`; their amounts at KEY summed, with `of KEY`)" }],
    snippet: "limit[${1:3} per ${2:1m}](${3:ψ})",
  },
  always: {
    form: "always",
    figureName: "Fallback",
    holdsWhen: "Θ holds at every event",
    requirement: "Θ(e)",
    reading: "the body holds at every event",
    label: "always Θ",
    parameters: [{ label: "Θ", documentation: "a condition built from patterns, `once` and `eventually`" }],
    snippet: "always ${1:Θ}",
  },
};

export const forms: readonly Form[] = ["abs", "prec", "resp", "bresp", "rslv", "until", "always", "limit"];

export function isForm(word: string): word is Form {
  return (forms as readonly string[]).includes(word);
}

/** What the other keywords mean, for a hover on them (docs/language.md). */
export const keywordDescriptions: Readonly<Record<string, string>> = {
  policy: "`policy NAME { … }`: a block of patterns and rules; each rule gets its own verdict.",
  pattern: "`pattern NAME = ψ`: names a condition on one event, for the policy's rules and other patterns.",
  rule: "`rule NAME: φ`: a statement; each rule gets its own verdict. It may end with a scope (`after ψ`, `before ψ`, `between ψ and ψ'`, `after ψ until ψ'`), then a response (`block`, `warn`, `ask`).",
  not: "`not Θ`: Θ does not hold at this event.",
  and: "`ψ and ψ'`: both hold at this event.",
  or: "`ψ or ψ'`: at least one holds at this event.",
  implies: "`Θ implies Θ'`: `not (Θ and not Θ')`; right-associative.",
  once: "`once Θ`: Θ held at some **strictly earlier** event (◇⁻); `once[5m] Θ`: at one at most five minutes earlier. Only inside `always`.",
  eventually: "`eventually Θ`: Θ holds at some **strictly later** event (◇⁺); `eventually[5m] Θ`: at one at most five minutes later. Only inside `always`.",
  in: "`action in {…}` / `KEY in {…}`: the action, or a value of the argument, is one of the set.",
  action: "`action in {a, \"b.c\"}`: the event's action is one of the names.",
  status: "`status = ok` / `status = error`: the call succeeded / failed (a call without a result is neither).",
  output: "`output ~ \"wildcard\"`: the call's output (its first 65,536 characters) matches the wildcard.",
  ok: "`status = ok`: the call succeeded.",
  error: "`status = error`: the call failed.",
  true: "the JSON value `true`.",
  false: "the JSON value `false`.",
  null: "the JSON value `null`.",
  of: "`limit[X of KEY per D](ψ)`: a limit on a sum instead of a count: the numbers at KEY of the events matching ψ add up to at most X (each element of a list counts; an event whose amount is missing, not a number, or negative is a witness itself). `of` is not reserved: it is a word only in a limit's brackets.",
  per: "`limit[N per D](ψ)`: at most N events matching ψ in any window of length D, a duration (`500ms`, `30s`, `5m`, `2h`, `1d`). `per` is not reserved: it is a word only in a limit's brackets.",
};

/** What a rule's response does with a violation (docs/language.md, Responses). */
export const responseDescriptions: Readonly<Record<RuleResponse, string>> = {
  block: "stops the call (the default: a rule without a response blocks)",
  warn: "lets the call go ahead and reports the violation",
  ask: "holds the call until a person allows or refuses it",
  halt: "stops the call and halts the run: every later call of the run is refused",
  quarantine: "stops the call and quarantines the run: from then on only calls the policy's `read_only` pattern matches may run",
};

/**
 * What each scope means (docs/language.md, Scopes): `table` is the table's row word for word (a test
 * checks it), `judged` the same said of a rule with its patterns, `summary` the line completion shows.
 */
export interface ScopeDescription {
  readonly kind: ScopeKind;
  /** As written, with ψ and ψ' for the patterns. */
  readonly label: string;
  readonly table: string;
  /** "the rule is judged …", with the patterns' texts in place of ψ and ψ'. */
  readonly judged: (open: string, close: string) => string;
  readonly summary: string;
  readonly snippet: string;
}

export const scopeDescriptions: Readonly<Record<ScopeKind, ScopeDescription>> = {
  after: {
    kind: "after",
    label: "after ψ",
    table: "from the first event matching ψ (included) to the end",
    judged: (open) => `the rule is judged from the first event matching ${open} (included) to the end of the run; before it, nothing is judged`,
    summary: "judged from the first event matching ψ on",
    snippet: "after ${1:ψ}",
  },
  before: {
    kind: "before",
    label: "before ψ",
    table: "from the start up to the first event matching ψ (excluded); the whole run if none does",
    judged: (open) => `the rule is judged from the start of the run up to the first event matching ${open} (excluded), or on the whole run if no event does`,
    summary: "judged up to the first event matching ψ (the whole run if none does)",
    snippet: "before ${1:ψ}",
  },
  between: {
    kind: "between",
    label: "between ψ and ψ'",
    table: "each stretch from an event matching ψ (included) to the next event matching ψ' (excluded); a stretch that never closes is not judged",
    judged: (open, close) =>
      `the rule is judged on each stretch from an event matching ${open} (included) to the next event matching ${close} (excluded), each as a run of its own; a stretch that never closes is not judged`,
    summary: "judged on each stretch from a ψ-event to the next ψ'-event; one never closed is not",
    snippet: "between ${1:ψ} and ${2:ψ'}",
  },
  afterUntil: {
    kind: "afterUntil",
    label: "after ψ until ψ'",
    table: "the same stretches, the one still open at the end judged too",
    judged: (open, close) =>
      `the rule is judged on each stretch from an event matching ${open} (included) to the next event matching ${close} (excluded), each as a run of its own; the stretch still open at the end is judged too`,
    summary: "judged on each stretch from a ψ-event to the next ψ'-event, one still open at the end too",
    snippet: "after ${1:ψ} until ${2:ψ'}",
  },
};

export const scopeKinds: readonly ScopeKind[] = ["after", "before", "between", "afterUntil"];
