import type { Diagnostic, Span } from "@vigil/diagnostics";

/**
 * The abstract syntax of test files, every node with its span.
 *
 * Test files (`.vigiltest`): what a policy's author expects of it, beside the policy. A file names
 * its policy and holds named tests; each test gives a run (events written by hand in a compact
 * form, or a trace file in any supported format) and its expectations: a rule's verdict with its
 * witnesses, and the online monitor's decision on a call. The language is its own, so that none of
 * its words are reserved in policies. Reading never throws on user input: every problem is a
 * diagnostic (V2001–V2006) and the tree is as complete as the text allows.
 *
 * ```
 * policy "dashcam.vigil"
 *
 * /// Frames sampled too fast are refused.
 * test "fast sampling" {
 *   events {
 *     sample_frames {video: "a.mp4", fps: 30} ok output "sampled 2700 frames" at 0s
 *     estimate_M {frames: "frames/index.json"} error at 90s
 *   }
 *   expect R0 violated at 1
 *   expect others hold
 *   decide 1 block by R0
 * }
 * ```
 */

/** A name the test gives a rule: `R0`, or `dashcam.R0` when the file's policies share names. */
export interface RuleReference {
  readonly policy?: string;
  readonly name: string;
  readonly span: Span;
}

/**
 * One event written by hand: a call, `action {args} status output "…"`, or a message of the
 * conversation, `user "…"` or `agent "…"` (the events `user_message` and `agent_message` with their
 * `text`, as a recording read with messages has them). Either may end with its time, `at T`: a
 * duration from the run's start, which is epoch 0 (`at 0s`, `at 90s`, `at 5m`), or an ISO 8601
 * date-time with a time zone (`at "2026-11-27T10:00:00Z"`).
 */
export interface HandEvent {
  /** Set for a message; absent for a call. */
  readonly kind?: "message";
  readonly action: string;
  /** The arguments as JSON text (numbers as written, so that integers stay exact). */
  readonly argsJson: string;
  /** Absent for `pending` (a call without a result) and for an event written with no status (`ok`). */
  readonly status?: "ok" | "error";
  readonly pending: boolean;
  readonly output?: string;
  /** `at T`: the event's time, in epoch milliseconds (a duration `T` is epoch 0 + `T`). Absent without `at`. */
  readonly time?: number;
  /** Where `T` is written. */
  readonly timeSpan?: Span;
  readonly span: Span;
}

export interface EventsInput {
  readonly kind: "events";
  /** `events ground { … }`: shell calls are grounded as in a recording. */
  readonly ground: boolean;
  readonly events: readonly HandEvent[];
  readonly span: Span;
}

export interface TraceInput {
  readonly kind: "trace";
  /** The trace file, relative to the test file. */
  readonly path: string;
  readonly pathSpan: Span;
  /** `run "NAME"`: the run of that name, of a file holding several (a τ-bench results file), as `vigilc check --run` names it. */
  readonly run?: string;
  readonly runSpan?: Span;
  /** `messages`: the conversation's messages are events too. */
  readonly messages: boolean;
  readonly span: Span;
}

export type TestInput = EventsInput | TraceInput;

/** A witness the test expects: the position of the event, and for `until` the event that broke it. */
export interface ExpectedWitness {
  readonly position: number;
  readonly brokenBy?: number;
  /** `N broken by M` as a whole, and the `M`. */
  readonly span: Span;
  readonly brokenBySpan?: Span;
}

export interface VerdictExpectation {
  readonly kind: "verdict";
  /** The rule, or `all` (every rule of the policy) or `others` (every rule no other line names). */
  readonly rule: RuleReference | "all" | "others";
  readonly holds: boolean;
  /** For `violated at …`: exactly these witnesses; absent: any violation. */
  readonly witnesses?: readonly ExpectedWitness[];
  readonly span: Span;
}

export type ExpectedDecision = "allow" | "block" | "ask" | "warn";

export interface DecisionExpectation {
  readonly kind: "decision";
  /** The position of the call the monitor decides (its event in the run). */
  readonly position: number;
  readonly positionSpan: Span;
  readonly decision: ExpectedDecision;
  /** `by R, S`: exactly the rules the decision reports. */
  readonly rules?: readonly RuleReference[];
  readonly span: Span;
}

export type Expectation = VerdictExpectation | DecisionExpectation;

export interface TestCase {
  readonly name: string;
  readonly nameSpan: Span;
  readonly doc?: string;
  readonly input?: TestInput;
  readonly expectations: readonly Expectation[];
  readonly span: Span;
}

export interface TestFile {
  /** The policy under test, relative to the test file. */
  readonly policy?: { readonly path: string; readonly span: Span };
  readonly tests: readonly TestCase[];
  readonly diagnostics: readonly Diagnostic[];
}
