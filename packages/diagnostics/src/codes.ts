import type { Severity } from "./severity.js";

export interface DiagnosticCodeEntry {
  readonly severity: Severity;
  /** One line saying what the code means; docs/language.md's list of diagnostics gives it for every `V` code (test/language-doc.test.ts checks that). */
  readonly summary: string;
}

/**
 * The one registry of every diagnostic the toolchain reports. Codes are stable: tools and quick
 * fixes key on them, so a code is never reused for another meaning. V0xxx are policy-syntax codes,
 * V1xxx policy-checking codes, V2xxx test-file codes, T0xxx trace-input codes, E0xxx decision-procedure codes, S0xxx SQL-compilation codes.
 */
export const diagnosticCodes = {
  // Syntax (produced by @vigil/syntax).
  V0001: { severity: "error", summary: "unexpected token: the parser expected something else here" },
  V0002: { severity: "error", summary: "a string literal is not closed before the end of the line" },
  V0003: { severity: "error", summary: "a character that cannot start any token" },
  V0004: { severity: "error", summary: "a string literal contains an invalid escape sequence" },
  V0005: { severity: "error", summary: "a number literal is not a valid JSON number, or a list index in a key path (`argv.0`) is not digits without leading zeros up to 4294967294" },
  V0006: { severity: "error", summary: "an expression is nested too deeply for the parser" },
  V0007: { severity: "error", summary: "a value is written as a bare word; argument values are JSON values" },
  V0009: { severity: "error", summary: "a statement's scope is malformed: `after ψ`, `before ψ`, `between ψ and ψ'` or `after ψ until ψ'`" },
  V0010: { severity: "error", summary: "the word before `(KEY)` in a condition is not `every`, `some` or `count`, or does not go with the operator after it (`count` before a comparison; `every` and `some` not before `= $x`)" },
  V0008: { severity: "error", summary: "a rule's response is not `block`, `warn`, `ask`, `halt` or `quarantine`, its remediation message is misplaced, or the word after a key is not `matches` before a regular expression or `contains` before a variable" },

  // Checking (produced by @vigil/checker).
  V1001: { severity: "error", summary: "a name refers to no pattern of the policy" },
  V1002: { severity: "error", summary: "two rules of one policy have the same name" },
  V1003: { severity: "error", summary: "two patterns of one policy have the same name" },
  V1004: { severity: "error", summary: "patterns refer to each other in a cycle" },
  V1005: { severity: "error", summary: "two policies of one file have the same name" },
  V1006: { severity: "error", summary: "a variable is not used exactly once in each pattern of a binary form" },
  V1007: { severity: "error", summary: "a variable appears where it cannot be bound (a unary form, `always`, under `not`, or in only some branches of an `or`)" },
  V1008: { severity: "error", summary: "a temporal operator (`once`, `eventually`) appears inside a pattern" },
  V1009: { severity: "error", summary: "the bound of `bresp` is not a positive integer or duration, the window of `once` or `eventually` is not a positive duration, or another form has a bound" },
  V1010: { severity: "error", summary: "a wildcard pattern is malformed" },
  V1011: { severity: "error", summary: "a form is applied to the wrong number of patterns" },
  V1013: { severity: "error", summary: "a regular expression is malformed, has a flag other than `i` and `s`, or needs backtracking" },
  V1014: { severity: "error", summary: "`contains $x` appears in the pattern that must bind `$x` (the first of a binary form, the trigger of `until`)" },
  V1015: { severity: "error", summary: "a scope's pattern uses a variable; a scope bounds the whole statement and binds nothing" },
  V1016: { severity: "error", summary: "a `limit` is malformed: its maximum is not a whole number of events (or, with `of`, a number zero or more), or its window after `per` is not a positive duration" },
  V1017: { severity: "error", summary: "a comparison's number is beyond the exact decimals Vigil compares (an exponent over 400)" },
  V1018: { severity: "error", summary: "a policy with a `quarantine` rule declares no `read_only` pattern, or its `read_only` pattern uses a variable" },
  V1012: { severity: "error", summary: "a variable of `until` is not bound by its trigger, or a pattern uses only some of them" },
  V1101: { severity: "warning", summary: "an action is not in the trace's signature, so it denotes the empty set" },
  V1102: { severity: "warning", summary: "an argument name is not in the trace's signature, so a condition on it is false" },
  V1103: { severity: "info", summary: "a value does not occur under its argument in the trace, so it matches nothing" },
  V1104: { severity: "warning", summary: "a pattern is declared but never used" },
  V1105: { severity: "warning", summary: "a `///` doc comment is not followed by a policy, pattern or rule" },
  V1106: { severity: "warning", summary: "a rule's remediation message is empty" },
  V1107: { severity: "error", summary: "a pattern nests too deeply once the patterns it refers to are expanded" },
  V1108: { severity: "warning", summary: "a scope's pattern mixes `and` and `or` without parentheses, or `between ψ and ψ' and ψ''` is read as `between ψ and (ψ' and ψ'')`" },
  V1110: { severity: "warning", summary: "a comparison's key never holds a number (nor a string spelling one) in the signature, so the comparison holds on no event" },
  V1109: { severity: "warning", summary: "a negated condition on an argument whose values are lists in the signature holds only when no element of the list meets it" },

  // Test files (produced by @vigil/syntax when reading one, and by the test runner of @vigil/compiler).
  V2001: { severity: "error", summary: "unexpected text in a test file: the parser expected something else here" },
  V2002: { severity: "error", summary: "a string in a test file is not closed before the end of the line" },
  V2003: { severity: "error", summary: "a string in a test file contains an invalid escape sequence" },
  V2004: { severity: "error", summary: "a number in a test file is not a valid JSON number, or an event position is not a positive integer" },
  V2005: { severity: "error", summary: "a character in a test file that cannot start any token" },
  V2006: { severity: "error", summary: "an event's time (`at …`) in a test file is neither a duration from the run's start (`90s`, `5m`) nor an ISO 8601 date-time with a time zone" },
  V2101: { severity: "error", summary: "a test file names no policy, or its policy cannot be read or has errors" },
  V2102: { severity: "error", summary: "a test names a rule the policy does not have, or a name several of its policies share" },
  V2103: { severity: "error", summary: "a test has no run: neither `events { … }` nor `trace \"…\"`" },
  V2104: { severity: "error", summary: "the run of a test cannot be read: its trace file is missing or has errors" },
  V2105: { severity: "error", summary: "an expectation names an event position beyond the run, or `decide` names an event that is not a call" },
  V2106: { severity: "warning", summary: "two tests of one file have the same name" },
  V2107: { severity: "error", summary: "`broken by` is given for a rule that is not an `until`" },
  V2108: { severity: "warning", summary: "a test has no expectations, so it cannot fail" },
  V2109: { severity: "error", summary: "a word after an event is read as another event, but looks like a misspelled status (`okay` or `success` for `ok`, `failed` for `error`)" },
  V2201: { severity: "error", summary: "an expectation of a test does not hold: the policy's verdict or decision differs" },

  // Traces (produced by @vigil/trace).
  T0001: { severity: "error", summary: "a trace line is not valid JSON" },
  T0002: { severity: "error", summary: "a trace event lacks a required field or a field has the wrong type" },
  T0003: { severity: "error", summary: "a trace file is neither JSON Lines nor a JSON array of events" },
  T0004: { severity: "error", summary: "a trace file cannot be read" },
  T0005: { severity: "info", summary: "an event's output was longer than the observation cap and was truncated" },
  T0006: { severity: "warning", summary: "a trace event has fields the canonical format does not define; they are ignored" },
  T0007: { severity: "error", summary: "a tool result refers to no tool call of the trace" },
  T0008: { severity: "error", summary: "the trace's format cannot be recognized, or is not the one requested" },
  T0009: { severity: "error", summary: "a tool call's arguments are not a JSON object" },
  T0010: { severity: "warning", summary: "a tool call is answered more than once; the first answer is kept" },
  T0011: { severity: "warning", summary: "a shell call's command line does not parse, so it is not grounded into events" },
  T0012: { severity: "error", summary: "an integer in a trace is beyond 2^53 − 1 and cannot be represented exactly" },
  T0013: { severity: "error", summary: "a number in a trace is out of range (beyond the largest double)" },
  T0014: { severity: "info", summary: "an argument value was longer than the observation cap and was truncated" },
  T0015: { severity: "error", summary: "a trace has more diagnostics than are kept; the rest are counted in one (its severity is theirs)" },
  T0016: { severity: "error", summary: "an event's time (a canonical event's `time`, a recording's `timestamp`) is neither an ISO 8601 date-time with a time zone nor a whole number of epoch milliseconds" },

  // Decision procedures (produced by @vigil/smt and @vigil/engine).
  E0001: { severity: "error", summary: "the solver did not decide a statement (time-out, resource limit or failure): fail closed" },
  E0002: { severity: "error", summary: "a statement could not be evaluated because its policy has errors" },
  E0003: { severity: "error", summary: "an internal error kept a run from being judged (a bug: report it with the input)" },
  E0004: { severity: "error", summary: "a rule measures time (a window of time, a limit per a time) and an event of the run has no time, or one earlier than the event before it: the rule is undecided" },

  // SQL compilation (produced by @vigil/sql).
  S0001: { severity: "error", summary: "a rule cannot be compiled exactly to the chosen SQL dialect (its regular expressions cannot keep a pattern's meaning, or it has no exact decimals for a sum); the rule is left out of that dialect's SQL" },

  // Analysis of a policy's meaning over symbolic runs (vigilc analyze, produced by @vigil/compiler).
  A0001: { severity: "warning", summary: "no event can match a pattern of a rule, so the pattern never holds" },
  A0002: { severity: "warning", summary: "no run (of up to the depth searched) breaks a rule: it never fires" },
  A0003: { severity: "warning", summary: "every run (of up to the depth searched) in which a rule's trigger holds breaks the rule" },
  A0004: { severity: "warning", summary: "no run (of up to the depth searched) that keeps every rule calls an action successfully: the policy makes it impossible" },
  A0005: { severity: "info", summary: "a rule is implied by the other rules (no run of up to the depth searched keeps them and breaks it)" },
  A0006: { severity: "warning", summary: "once a rule's trigger holds, no run (of up to the depth searched) keeps every rule: the rules conflict" },
  A0007: { severity: "warning", summary: "the analysis could not decide a question (a solver time-out): what it says of that rule is incomplete" },
} as const satisfies Record<string, DiagnosticCodeEntry>;

export type DiagnosticCode = keyof typeof diagnosticCodes;
