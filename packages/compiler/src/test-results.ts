import type { CheckedStatement } from "@vigil/checker";
import type { Diagnostic, Span } from "@vigil/diagnostics";
import type { PatternMatchCount, TriggerCount } from "@vigil/engine";
import type { Expectation } from "@vigil/syntax";
import type { TraceEvent } from "@vigil/trace";
import type { EngineName } from "./engines.js";

/**
 * What the test runner gives back, as data: per test file its diagnostics, tests and coverage; per
 * test its outcome, failures, run and the why of each rule's verdict. Reports (`vigilc test`'s
 * human, JSON and JUnit output, the editor's lenses) are written from these alone.
 */

/** An expectation that did not hold, on the engines that say the same about it. */
export interface ExpectationFailure {
  readonly expectation: Expectation;
  readonly engines: readonly EngineName[];
  /** The rule it concerns, as `policy.name`. */
  readonly rule?: string;
  /** What the test expects, and what the engines found, in the test file's own words. */
  readonly expected: string;
  readonly actual: string;
  /** The events worth showing beside the difference (expected and actual witnesses, breaking events), ascending. */
  readonly positions: readonly number[];
}

/** Why a rule's verdict on a test's run is what it is. */
export interface RuleWhy {
  readonly rule: string;
  readonly holds: boolean;
  readonly witnesses: readonly number[];
  readonly brokenBy?: readonly number[];
  readonly undecided?: string;
  /** On how many events its trigger held (absent for `always`). */
  readonly triggers?: TriggerCount;
  /** Per pattern of the rule: on which events it matched. */
  readonly patterns: readonly PatternMatchCount[];
}

export interface TestResult {
  readonly name: string;
  readonly doc?: string;
  readonly span: Span;
  /** `error` when the test could not run (its diagnostics say why): bad input, not a failure. */
  readonly outcome: "passed" | "failed" | "error";
  readonly failures: readonly ExpectationFailure[];
  readonly diagnostics: readonly Diagnostic[];
  /** The run's events, for showing the ones a failure names. */
  readonly events: readonly TraceEvent[];
  /** For events written by hand: where each event's line is in the test file, by position (grounded events share their call's line). */
  readonly eventSpans: ReadonlyMap<number, Span>;
  /** The forward engine's verdict on every rule, with its why. */
  readonly rules: readonly RuleWhy[];
  /**
   * What the test's passing expectations cover: the rules it expects violated and are, and those it
   * expects to hold, hold, and whose trigger matched an event (a pass that is not vacuous).
   */
  readonly covers: { readonly violated: readonly string[]; readonly heldNonVacuously: readonly string[] };
  readonly durationMs: number;
}

/** What the tests of a policy cover of one rule. */
export interface RuleCoverage {
  readonly policy: string;
  readonly name: string;
  readonly form: CheckedStatement["form"];
  readonly span: Span;
  /** The tests in which it is expected violated, and is. */
  readonly violatedBy: readonly string[];
  /**
   * The tests in which it is expected to hold, holds, and its trigger matched (a pass that is not
   * vacuous). `undefined` when no such pass can exist: `abs` (its trigger is its violation) and
   * `always` (no trigger).
   */
  readonly heldBy?: readonly string[];
  /** Per pattern: on how many events of all the tests it matched. */
  readonly patterns: readonly { readonly role: PatternMatchCount["role"]; readonly span: Span; readonly matched: number }[];
  /** Violated by a test and, where it can be, held non-vacuously by one. */
  readonly covered: boolean;
}

export interface TestFileResult {
  readonly file: string;
  /** The test file's text, when it was read (for showing expectations). */
  readonly source?: string;
  /** The policy file the tests name, resolved. */
  readonly policyFile?: string;
  /** The policy's text (for showing rules and patterns), when it was read. */
  readonly policySource?: string;
  /** Problems with the file as a whole (its syntax, its policy): none of its tests ran when one is an error. */
  readonly diagnostics: readonly Diagnostic[];
  readonly tests: readonly TestResult[];
  /** Every rule of the policy, with what the tests that ran cover of it. */
  readonly coverage: readonly RuleCoverage[];
}
