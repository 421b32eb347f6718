import type { IRecognitionException, IToken, TokenType } from "chevrotain";
import { createToken, EmbeddedActionsParser, Lexer } from "./chevrotain.js";
import { closestName, diagnostic, isEventTime, LineIndex, parseDateTime, type Diagnostic, type Span } from "@vigil/diagnostics";
import { looksLikeDuration, parseDuration } from "./duration.js";
import { decodeString, isJsonNumber } from "./literals.js";

/**
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

// The vocabulary. Every word is a `Word`: a keyword is one only where the grammar wants it, so
// that an action or an argument may be called `test` or `expect`.
const Word = createToken({ name: "Word", pattern: Lexer.NA });
const Identifier = createToken({ name: "Identifier", pattern: /[A-Za-z_][A-Za-z0-9_\-]*/, categories: [Word] });
function keyword(word: string): TokenType {
  return createToken({ name: `${word[0]!.toUpperCase()}${word.slice(1)}Keyword`, pattern: new RegExp(word), longer_alt: Identifier, categories: [Word] });
}
const Policy = keyword("policy");
const Test = keyword("test");
const Events = keyword("events");
const Ground = keyword("ground");
const Trace = keyword("trace");
const Messages = keyword("messages");
const Run = keyword("run");
const Expect = keyword("expect");
const Holds = keyword("holds");
const Hold = keyword("hold");
const Violated = keyword("violated");
const At = keyword("at");
const Broken = keyword("broken");
const By = keyword("by");
const Decide = keyword("decide");
const Allow = keyword("allow");
const Block = keyword("block");
const Ask = keyword("ask");
const Warn = keyword("warn");
const Ok = keyword("ok");
const ErrorWord = keyword("error");
const Pending = keyword("pending");
const Output = keyword("output");
const True = keyword("true");
const False = keyword("false");
const Null = keyword("null");

const WhiteSpace = createToken({ name: "WhiteSpace", pattern: /[ \t\r\n\f\v\u00a0\ufeff]+/, group: Lexer.SKIPPED });
const DocComment = createToken({ name: "DocComment", pattern: /\/\/\/[^\r\n]*/, group: "comments" });
const LineComment = createToken({ name: "LineComment", pattern: /\/\/[^\r\n]*/, group: "comments" });
const StringLiteral = createToken({ name: "StringLiteral", pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*"?/ });
const NumberLiteral = createToken({ name: "NumberLiteral", pattern: /-?(?:[0-9]|\.[0-9])(?:[eE][+-]|[0-9A-Za-z_.])*/ });
const LeftBrace = createToken({ name: "LeftBrace", pattern: /\{/ });
const RightBrace = createToken({ name: "RightBrace", pattern: /\}/ });
const LeftBracket = createToken({ name: "LeftBracket", pattern: /\[/ });
const RightBracket = createToken({ name: "RightBracket", pattern: /\]/ });
const Comma = createToken({ name: "Comma", pattern: /,/ });
const Colon = createToken({ name: "Colon", pattern: /:/ });
const Dot = createToken({ name: "Dot", pattern: /\./ });

const keywords = [Policy, Test, Events, Ground, Trace, Run, Messages, Expect, Holds, Hold, Violated, At, Broken, By, Decide, Allow, Block, Ask, Warn, Ok, ErrorWord, Pending, Output, True, False, Null];
const tokens: TokenType[] = [WhiteSpace, DocComment, LineComment, Word, ...keywords, Identifier, StringLiteral, NumberLiteral, LeftBrace, RightBrace, LeftBracket, RightBracket, Comma, Colon, Dot];
const testLexer = new Lexer(tokens, { positionTracking: "full", ensureOptimizations: false });

/** The words a test file gives meaning to, for an editor's highlighting and completion. */
export const testFileKeywords: readonly string[] = [...keywords.map((token) => String(token.PATTERN).slice(1, -1)), "all", "others"];

/** What the parser builds before spans are measured: offsets only. */
type Offsets = { readonly start: number; readonly end: number };

class TestFileParser extends EmbeddedActionsParser {
  /** Filled by the caller before each parse. */
  spanOf: (from: IToken, to: IToken) => Span = () => {
    throw new Error("unset");
  };
  /** Problems found while building (bad literals), besides the parser's own errors. */
  problems: Diagnostic[] = [];
  docBefore: (token: IToken) => string | undefined = () => undefined;

  constructor() {
    super(tokens, { recoveryEnabled: true, maxLookahead: 3 });
    this.performSelfAnalysis();
  }

  file = this.RULE("file", () => {
    let policy: TestFile["policy"];
    const tests: TestCase[] = [];
    this.MANY(() => {
      this.OR([
        {
          ALT: () => {
            const first = this.CONSUME(Policy);
            const path = this.CONSUME(StringLiteral);
            this.ACTION(() => {
              if (policy !== undefined) this.problems.push(diagnostic("V2001", "a test file names one policy; this is a second `policy` line", { span: this.spanOf(first, path), help: "give each policy its own test file" }));
              else policy = { path: this.text(path), span: this.spanOf(path, path) };
            });
          },
        },
        { ALT: () => tests.push(this.SUBRULE(this.testCase)) },
      ]);
    });
    return { policy, tests };
  });

  private testCase = this.RULE("testCase", (): TestCase => {
    const first = this.CONSUME(Test);
    const name = this.CONSUME(StringLiteral);
    this.CONSUME(LeftBrace);
    const inputs: TestInput[] = [];
    // (Recovered sub-rules give `undefined`: those lines were reported and are left out.)
    const expectations: Expectation[] = [];
    this.MANY(() => {
      this.OR([
        { ALT: () => inputs.push(this.SUBRULE(this.eventsBlock)) },
        { ALT: () => inputs.push(this.SUBRULE(this.traceLine)) },
        { ALT: () => expectations.push(this.SUBRULE(this.expectLine)) },
        { ALT: () => expectations.push(this.SUBRULE(this.decideLine)) },
      ]);
    });
    const last = this.CONSUME(RightBrace);
    return this.ACTION(() => {
      const given = inputs.filter((input) => input !== undefined && input !== null);
      for (const extra of given.slice(1)) {
        this.problems.push(diagnostic("V2001", "a test has one run: either `events { … }` or `trace \"…\"`, once", { span: extra.span, help: "split it into two tests" }));
      }
      const doc = this.docBefore(first);
      return {
        name: this.text(name),
        nameSpan: this.spanOf(name, name),
        ...(doc !== undefined ? { doc } : {}),
        ...(given[0] !== undefined ? { input: given[0] } : {}),
        // A line the parser could not read comes back empty from error recovery: it was reported.
        expectations: expectations.filter((expectation) => expectation !== undefined && expectation !== null),
        span: this.spanOf(first, last),
      };
    }) as TestCase;
  });

  private eventsBlock = this.RULE("eventsBlock", (): EventsInput => {
    const first = this.CONSUME(Events);
    let ground = false;
    this.OPTION(() => {
      this.CONSUME(Ground);
      ground = true;
    });
    this.CONSUME(LeftBrace);
    const events: HandEvent[] = [];
    this.MANY(() => events.push(this.SUBRULE(this.handEvent)));
    const last = this.CONSUME(RightBrace);
    return this.ACTION(() => {
      const read = events.filter((event) => event !== undefined && event !== null);
      this.problems.push(...misspelledStatuses(read));
      return { kind: "events" as const, ground, events: read, span: this.spanOf(first, last) };
    }) as EventsInput;
  });

  private handEvent = this.RULE("handEvent", (): HandEvent =>
    this.OR({
      // `user "…"` and `agent "…"` are messages: a call of an action named `user` followed by a
      // call written as a string would read the same, so such an action is quoted.
      IGNORE_AMBIGUITIES: true,
      DEF: [
        { GATE: () => this.isMessageStart(), ALT: () => this.SUBRULE(this.messageEvent) },
        { ALT: () => this.SUBRULE(this.callEvent) },
      ],
    }),
  );

  private messageEvent = this.RULE("messageEvent", (): HandEvent => {
    const who = this.CONSUME(Word);
    const text = this.CONSUME(StringLiteral);
    let last = text;
    let time: EventTime | undefined;
    this.OPTION({
      GATE: () => this.isTimeStart(),
      DEF: () => {
        time = this.SUBRULE(this.eventTime);
        if (time !== undefined && time !== null) last = time.last;
      },
    });
    return this.ACTION(() => ({
      kind: "message" as const,
      action: who.image === "user" ? "user_message" : "agent_message",
      argsJson: JSON.stringify({ text: this.text(text) }),
      pending: false,
      ...timeFields(time),
      span: this.spanOf(who, last),
    })) as HandEvent;
  });

  /** `at` followed by what a time is written as: an event's time, not an event named `at`. */
  private isTimeStart(): boolean {
    const next = this.LA(2).tokenType;
    return this.LA(1).tokenType === At && (next === NumberLiteral || next === StringLiteral);
  }

  /** `at T`: a duration from the run's start (epoch 0), or a date-time with a zone in quotes. */
  private eventTime = this.RULE("eventTime", (): EventTime => {
    this.CONSUME(At);
    const written = this.OR([{ ALT: () => this.CONSUME(NumberLiteral) }, { ALT: () => this.CONSUME(StringLiteral) }]);
    return this.ACTION(() => {
      const span = this.spanOf(written, written);
      if (written.isInsertedInRecovery === true) return { span, last: written };
      const time = written.tokenType === StringLiteral ? this.dateTime(written) : this.offset(written);
      return { ...(time !== undefined ? { time } : {}), span, last: written };
    }) as EventTime;
  });

  private isMessageStart(): boolean {
    const first = this.LA(1);
    return (first.image === "user" || first.image === "agent") && first.tokenType === Identifier && this.LA(2).tokenType === StringLiteral;
  }

  private callEvent = this.RULE("callEvent", (): HandEvent => {
    const first = this.OR([
      { GATE: () => !this.isStatusWord(this.LA(1)), ALT: () => this.CONSUME(Word) },
      { ALT: () => this.CONSUME(StringLiteral) },
    ]);
    const action = this.ACTION(() => (first.tokenType === StringLiteral ? this.text(first) : first.image)) as string;
    let last = first;
    let argsJson = "{}";
    this.OPTION(() => {
      const object = this.SUBRULE(this.objectValue);
      if (object !== undefined && object !== null) {
        argsJson = object.json;
        last = object.last;
      }
    });
    let status: "ok" | "error" | undefined;
    let pending = false;
    this.OPTION2(() => {
      this.OR2([
        { ALT: () => ((last = this.CONSUME(Ok)), (status = "ok")) },
        { ALT: () => ((last = this.CONSUME(ErrorWord)), (status = "error")) },
        { ALT: () => ((last = this.CONSUME(Pending)), (pending = true)) },
      ]);
    });
    let output: string | undefined;
    this.OPTION3(() => {
      this.CONSUME(Output);
      const text = this.CONSUME2(StringLiteral);
      last = text;
      this.ACTION(() => (output = this.text(text)));
    });
    let time: EventTime | undefined;
    this.OPTION4({
      GATE: () => this.isTimeStart(),
      DEF: () => {
        time = this.SUBRULE(this.eventTime);
        if (time !== undefined && time !== null) last = time.last;
      },
    });
    return this.ACTION(() => ({
      action,
      argsJson,
      ...(status !== undefined ? { status } : pending ? {} : { status: "ok" as const }),
      pending,
      ...(output !== undefined ? { output } : {}),
      ...timeFields(time),
      span: this.spanOf(first, last),
    })) as HandEvent;
  });

  private traceLine = this.RULE("traceLine", (): TraceInput => {
    const first = this.CONSUME(Trace);
    const path = this.CONSUME(StringLiteral);
    let last = path;
    let run: IToken | undefined;
    let messages = false;
    this.OPTION(() => {
      this.CONSUME(Run);
      run = this.CONSUME2(StringLiteral);
      last = run;
    });
    this.OPTION2(() => {
      last = this.CONSUME(Messages);
      messages = true;
    });
    return this.ACTION(() => ({
      kind: "trace" as const,
      path: this.text(path),
      pathSpan: this.spanOf(path, path),
      ...(run !== undefined ? { run: this.text(run), runSpan: this.spanOf(run, run) } : {}),
      messages,
      span: this.spanOf(first, last),
    })) as TraceInput;
  });

  private expectLine = this.RULE("expectLine", (): VerdictExpectation => {
    const first = this.CONSUME(Expect);
    const rule = this.SUBRULE(this.ruleReference);
    let last = first;
    let holds = true;
    let witnesses: ExpectedWitness[] | undefined;
    this.OR([
      { ALT: () => (last = this.CONSUME(Holds)) },
      { ALT: () => (last = this.CONSUME(Hold)) },
      {
        ALT: () => {
          last = this.CONSUME(Violated);
          holds = false;
          this.OPTION(() => {
            this.CONSUME(At);
            witnesses = [];
            this.AT_LEAST_ONE_SEP({
              SEP: Comma,
              DEF: () => {
                const witness = this.SUBRULE(this.witness);
                if (witness !== undefined && witness !== null) {
                  witnesses!.push(witness.value);
                  last = witness.last;
                }
              },
            });
          });
        },
      },
    ]);
    return this.ACTION(() => {
      // A rule name the parser could not read was reported; the line is left out.
      if (rule === undefined || rule === null) return undefined;
      const span = this.spanOf(first, last);
      // `expect all hold`: every rule; `expect others hold`: every rule no other line names. A rule
      // called `all` or `others` is written with its policy's name, `policy.all`.
      const group = rule.policy === undefined && (rule.name === "all" || rule.name === "others") ? rule.name : undefined;
      if (group !== undefined && !holds) {
        this.problems.push(diagnostic("V2001", `\`expect ${group}\` can only say that rules hold`, { span, help: "name the rule that is violated: `expect RULE violated at N`" }));
      }
      return { kind: "verdict" as const, rule: group ?? rule, holds, ...(witnesses !== undefined ? { witnesses } : {}), span };
    }) as VerdictExpectation;
  });

  private witness = this.RULE("witness", (): { value: ExpectedWitness; last: IToken } => {
    const at = this.CONSUME(NumberLiteral);
    let last = at;
    let brokenBy: number | undefined;
    this.OPTION(() => {
      this.CONSUME(Broken);
      this.CONSUME(By);
      const by = this.CONSUME2(NumberLiteral);
      last = by;
      this.ACTION(() => (brokenBy = this.position(by)));
    });
    return this.ACTION(() => ({
      value: { position: this.position(at), ...(brokenBy !== undefined ? { brokenBy, brokenBySpan: this.spanOf(last, last) } : {}), span: this.spanOf(at, last) },
      last,
    })) as { value: ExpectedWitness; last: IToken };
  });

  private decideLine = this.RULE("decideLine", (): DecisionExpectation => {
    const first = this.CONSUME(Decide);
    const at = this.CONSUME(NumberLiteral);
    const word = this.OR([{ ALT: () => this.CONSUME(Allow) }, { ALT: () => this.CONSUME(Block) }, { ALT: () => this.CONSUME(Ask) }, { ALT: () => this.CONSUME(Warn) }]);
    let last = word;
    let rules: RuleReference[] | undefined;
    this.OPTION(() => {
      this.CONSUME(By);
      rules = [];
      this.AT_LEAST_ONE_SEP({
        SEP: Comma,
        DEF: () => {
          const rule = this.SUBRULE(this.ruleReference);
          if (rule !== undefined && rule !== null) rules!.push(rule);
          this.ACTION(() => (last = this.LA(0)));
        },
      });
    });
    return this.ACTION(() => ({
      kind: "decision" as const,
      position: this.position(at),
      positionSpan: this.spanOf(at, at),
      decision: word.image as ExpectedDecision,
      ...(rules !== undefined ? { rules } : {}),
      span: this.spanOf(first, last),
    })) as DecisionExpectation;
  });

  private ruleReference = this.RULE("ruleReference", (): RuleReference => {
    const first = this.CONSUME(Word);
    let second: IToken | undefined;
    this.OPTION(() => {
      this.CONSUME(Dot);
      second = this.CONSUME2(Word);
    });
    return this.ACTION(() =>
      second === undefined ? { name: first.image, span: this.spanOf(first, first) } : { policy: first.image, name: second.image, span: this.spanOf(first, second) },
    ) as RuleReference;
  });

  // Values, written as in JSON (keys may be bare words). Each returns its JSON text.
  private objectValue = this.RULE("objectValue", (): { json: string; last: IToken } => {
    this.CONSUME(LeftBrace);
    const members: string[] = [];
    this.MANY_SEP({
      SEP: Comma,
      DEF: () => {
        let key = "";
        this.OR([
          {
            ALT: () => {
              const word = this.CONSUME(Word);
              this.ACTION(() => (key = word.image));
            },
          },
          {
            ALT: () => {
              const quoted = this.CONSUME(StringLiteral);
              this.ACTION(() => (key = this.text(quoted)));
            },
          },
        ]);
        this.CONSUME(Colon);
        const value = this.SUBRULE(this.value);
        members.push(`${JSON.stringify(key)}:${value ?? "null"}`);
      },
    });
    const last = this.CONSUME(RightBrace);
    return { json: `{${members.join(",")}}`, last };
  });

  private arrayValue = this.RULE("arrayValue", (): string => {
    this.CONSUME(LeftBracket);
    const elements: string[] = [];
    this.MANY_SEP({ SEP: Comma, DEF: () => elements.push(this.SUBRULE(this.value) ?? "null") });
    this.CONSUME(RightBracket);
    return `[${elements.join(",")}]`;
  });

  private value = this.RULE("value", (): string =>
    this.OR([
      {
        ALT: () => {
          const quoted = this.CONSUME(StringLiteral);
          return this.ACTION(() => JSON.stringify(this.text(quoted))) as string;
        },
      },
      {
        ALT: () => {
          const number = this.CONSUME(NumberLiteral);
          return this.ACTION(() => this.number(number)) as string;
        },
      },
      { ALT: () => (this.CONSUME(True), "true") },
      { ALT: () => (this.CONSUME(False), "false") },
      { ALT: () => (this.CONSUME(Null), "null") },
      { ALT: () => this.SUBRULE(this.objectValue)?.json ?? "{}" },
      { ALT: () => this.SUBRULE(this.arrayValue) ?? "[]" },
    ]),
  );

  private isStatusWord(token: IToken): boolean {
    return token.tokenType === Ok || token.tokenType === ErrorWord || token.tokenType === Pending || token.tokenType === Output;
  }

  /** A string token's value; a bad literal is reported and read as well as it can be. */
  private text(token: IToken): string {
    if (token.isInsertedInRecovery === true || token.image === "") return "";
    const closed = /^"(?:[^"\\\r\n]|\\[^\r\n])*"$/.test(token.image);
    const decoded = decodeString(token.image, closed);
    if (!closed) {
      this.problems.push(diagnostic("V2002", "this string is not closed before the end of the line", { span: this.spanOf(token, token), help: 'close it with `"`' }));
    } else if (decoded.problem !== undefined) {
      this.problems.push(diagnostic("V2003", decoded.problem, { span: this.spanOf(token, token), ...(decoded.help !== undefined ? { help: decoded.help } : {}) }));
    }
    return decoded.value;
  }

  private number(token: IToken): string {
    if (token.isInsertedInRecovery === true) return "0";
    if (!isJsonNumber(token.image)) {
      this.problems.push(diagnostic("V2004", `\`${token.image}\` is not a number`, { span: this.spanOf(token, token), help: "numbers are written as in JSON: `3`, `-1.5`, `2e3`" }));
      return "0";
    }
    return token.image;
  }

  /** An event's time written as a duration: epoch 0 plus the duration. */
  private offset(token: IToken): number | undefined {
    const offset = parseDuration(token.image);
    if (offset !== undefined && isEventTime(offset)) return offset;
    const why = looksLikeDuration(token.image) ? "a duration too long for a time (past the year 9999)" : "not a duration";
    this.problems.push(
      diagnostic("V2006", `\`${token.image}\` is ${why}: an event's time is a duration from the run's start or a date-time`, {
        span: this.spanOf(token, token),
        help: 'write a whole number and a unit (`500ms`, `30s`, `5m`, `2h`, `1d`) counted from the run\'s start at epoch 0, or a date-time with a time zone in quotes (`at "2026-11-27T10:00:00Z"`)',
      }),
    );
    return undefined;
  }

  /** An event's time written as an ISO 8601 date-time with a time zone. */
  private dateTime(token: IToken): number | undefined {
    const text = this.text(token);
    const time = parseDateTime(text);
    if (time !== undefined) return time;
    const missing = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(text) ? ": it has no time of day and no time zone" : /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+$/.test(text) ? ": it has no time zone" : "";
    this.problems.push(
      diagnostic("V2006", `${token.image.slice(0, 60)} is not an ISO 8601 date-time with a time zone${missing}`, {
        span: this.spanOf(token, token),
        help: 'write it as "2026-11-27T10:00:00Z" or "2026-11-27T11:00:00+01:00" (a fraction of a second is allowed), or write a duration from the run\'s start (`at 90s`)',
      }),
    );
    return undefined;
  }

  /** A positive event position (1, 2, …). */
  private position(token: IToken): number {
    if (token.isInsertedInRecovery === true) return 0;
    if (!/^[1-9][0-9]*$/.test(token.image) || !Number.isSafeInteger(Number(token.image))) {
      this.problems.push(diagnostic("V2004", `\`${token.image}\` is not an event position`, { span: this.spanOf(token, token), help: "events are numbered 1, 2, … in the order of the run" }));
      return 0;
    }
    return Number(token.image);
  }
}

/**
 * A bare word right after an event on its line that is nearly a status or `output` (`okay`,
 * `eror`), or another word for one (`failed`, `success`), is read as the next event, an action of
 * that name, which shifts every later position and leaves the call's status `ok`: a test of a
 * failed call would pass on a call that succeeded. An error (V2109): an action of that name on the
 * line of another event is written in quotes.
 */
function misspelledStatuses(events: readonly HandEvent[]): Diagnostic[] {
  const problems: Diagnostic[] = [];
  events.forEach((event, index) => {
    const previous = events[index - 1];
    if (previous === undefined || previous.span.endLine !== event.span.line || event.kind === "message") return;
    if (event.argsJson !== "{}" || event.output !== undefined || event.status !== "ok" || event.span.end - event.span.start !== event.action.length) return;
    const folded = event.action.toLowerCase();
    // A slip of a letter or two (`eror`, `okk`, `outputs`), not an action that merely starts like a
    // status or is near one in a longer name (`okta_login`, `output_log`).
    const nearly = (word: string | undefined) => (word !== undefined && Math.abs(folded.length - word.length) <= 2 ? word : undefined);
    // A slip in another word for a status (`fialed`, `sucess`) is that word's status too.
    const slipped = nearly(closestName(folded, statusSynonyms.keys()));
    const near =
      statusSynonyms.get(folded) ??
      nearly(closestName(event.action, statusWords)) ??
      (slipped !== undefined ? statusSynonyms.get(slipped) : undefined) ??
      statusWords.find((word) => folded.startsWith(word) && nearly(word) !== undefined);
    if (near === undefined || near === event.action) return;
    problems.push(
      diagnostic("V2109", `\`${event.action}\` is read as another event, an action of that name; did you mean \`${near}\`?`, {
        span: event.span,
        help: "a status follows its event's arguments: `ok`, `error` or `pending`; an action of this name on the same line is written in quotes",
        fix: { title: `replace with \`${near}\``, edits: [{ span: event.span, newText: near }] },
      }),
    );
  });
  return problems;
}

const statusWords = ["ok", "error", "pending", "output"];

/** Other words for a status, as people write them after a call. */
const statusSynonyms: ReadonlyMap<string, string> = new Map([
  ...["okay", "success", "succeeded", "successful", "succeed", "passed", "pass"].map((word) => [word, "ok"] as const),
  ...["failed", "fail", "failure", "failing", "fails", "err", "errored", "erred"].map((word) => [word, "error"] as const),
]);

/**
 * A bare `at` on the line of the event before it, not followed by a time, is read as the next
 * event, an action named `at`: most likely a time left out or mistyped (`at five`), or a second
 * time (V2006). An action of that name is written in quotes, or on a line of its own.
 */
function timesWithoutValue(file: { readonly tests?: readonly TestCase[] }, text: string): Diagnostic[] {
  const problems: Diagnostic[] = [];
  for (const test of file.tests ?? []) {
    const input = test?.input;
    if (input?.kind !== "events") continue;
    input.events.forEach((event, index) => {
      const previous = input.events[index - 1];
      if (previous === undefined || previous.span.endLine !== event.span.line || event.kind === "message" || event.action !== "at") return;
      // Bare: the word as written, not the string `"at"`.
      if (!/^at(?![A-Za-z0-9_-])/.test(text.slice(event.span.start, event.span.start + 3))) return;
      const word = { ...event.span, end: event.span.start + 2, endLine: event.span.line, endColumn: event.span.column + 2 };
      problems.push(
        diagnostic("V2006", "this `at` is read as another event, an action named `at`: an event's time follows `at` directly", {
          span: word,
          help: 'write the time after it (`at 90s`, `at "2026-11-27T10:00:00Z"`), once per event; an action named `at` on the line of another event is written in quotes',
        }),
      );
    });
  }
  return problems;
}

/** An event's `at T`, read: the time (absent when `T` is malformed, which is reported), where `T` is, and its token. */
interface EventTime {
  readonly time?: number;
  readonly span: Span;
  readonly last: IToken;
}

function timeFields(time: EventTime | undefined): { time?: number; timeSpan?: Span } {
  if (time === undefined || time === null) return {};
  return { ...(time.time !== undefined ? { time: time.time } : {}), timeSpan: time.span };
}

let parserInstance: TestFileParser | undefined;

/**
 * Reads a test file. Never throws on user input: lexing and parsing problems are diagnostics
 * (V2001 unexpected text, V2002 an unclosed string, V2003 a bad escape, V2004 a bad number,
 * V2005 a character no token starts with, V2006 an event's time that is neither a duration nor a
 * date-time), and the tests are whatever could be read.
 */
export function parseTestFile(text: string): TestFile {
  const lines = new LineIndex(text);
  const spanOfOffsets = (start: number, end: number): Span => {
    const from = lines.position(start);
    const to = lines.position(end);
    return { start, end, line: from.line, column: from.column, endLine: to.line, endColumn: to.column };
  };
  const lexed = testLexer.tokenize(text);
  const diagnostics: Diagnostic[] = lexed.errors.map((error) =>
    diagnostic("V2005", `\`${text.slice(error.offset, error.offset + error.length).slice(0, 20)}\` cannot start anything in a test file`, {
      span: spanOfOffsets(error.offset, error.offset + error.length),
      help: "a test file holds `policy \"…\"` and `test \"…\" { … }`; comments start with `//`",
    }),
  );
  const docs = (lexed.groups["comments"] ?? []).filter((token) => token.tokenType === DocComment);
  const parser = (parserInstance ??= new TestFileParser());
  parser.problems = [];
  parser.spanOf = (from, to) => {
    const start = from.isInsertedInRecovery === true || Number.isNaN(from.startOffset) ? (to.isInsertedInRecovery === true || Number.isNaN(to.startOffset) ? 0 : to.startOffset) : from.startOffset;
    const end = to.isInsertedInRecovery === true || Number.isNaN(to.endOffset ?? NaN) ? start : to.endOffset! + 1;
    return spanOfOffsets(start, Math.max(start, end));
  };
  parser.docBefore = (token) => docText(docs, token, text);
  parser.input = lexed.tokens;
  // A file the parser could not recover in gives nothing back: it was reported.
  const result = (parser.file() as { policy?: TestFile["policy"]; tests?: TestCase[] } | undefined) ?? {};
  diagnostics.push(...parser.problems, ...timesWithoutValue(result, text), ...parser.errors.map((error) => syntaxError(error, spanOfOffsets, text.length)));
  return { ...(result.policy !== undefined ? { policy: result.policy } : {}), tests: (result.tests ?? []).filter((test) => test !== undefined && test !== null), diagnostics: diagnostics.sort((a, b) => (a.span?.start ?? 0) - (b.span?.start ?? 0)) };
}

/** The `///` lines right above a token (no blank line or other text between), joined. */
function docText(docs: readonly IToken[], token: IToken, text: string): string | undefined {
  const lines: string[] = [];
  let before = token.startOffset;
  for (let index = docs.length - 1; index >= 0; index--) {
    const doc = docs[index]!;
    if (doc.startOffset >= before) continue;
    if (text.slice(doc.endOffset! + 1, before).trim() !== "") break;
    lines.unshift(doc.image.slice(3).replace(/^ /, ""));
    before = doc.startOffset;
  }
  return lines.length > 0 ? lines.join("\n") : undefined;
}

const expectations: Readonly<Record<string, string>> = {
  file: "`policy \"…\"` or `test \"…\" { … }`",
  testCase: "`events { … }`, `trace \"…\"`, `expect …`, `decide …` or `}`",
  eventsBlock: "an event (`action {args} ok output \"…\" at 5s`) or `}`",
  handEvent: "an event: an action name, then `{args}`, `ok`, `error` or `pending`, `output \"…\"`, and `at` its time",
  eventTime: "a time after `at`: a duration from the run's start (`90s`, `5m`) or a date-time in quotes (`\"2026-11-27T10:00:00Z\"`)",
  traceLine: "`trace \"file\"`, then `run \"NAME\"` for one run of a file holding several, and `messages` if the conversation's messages are events",
  expectLine: "`expect RULE holds`, `expect RULE violated [at N, …]`, or `expect all hold` / `expect others hold`",
  witness: "an event position, then `broken by N` for `until`",
  decideLine: "`decide N allow|block|ask|warn [by RULE, …]`",
  ruleReference: "a rule name",
  objectValue: "`key: value` pairs in `{ … }`",
  arrayValue: "values in `[ … ]`",
  value: "a value (a string, a number, `true`, `false`, `null`, `{…}` or `[…]`)",
};

/** Punctuation and literals as a message names them. */
const tokenWords: Readonly<Record<string, string>> = {
  LeftBrace: "`{`",
  RightBrace: "`}`",
  LeftBracket: "`[`",
  RightBracket: "`]`",
  Comma: "`,`",
  Colon: "`:`",
  Dot: "`.`",
  StringLiteral: "a string in double quotes",
  NumberLiteral: "a number",
  Word: "a name",
  Identifier: "a name",
};

function syntaxError(error: IRecognitionException, spanOf: (start: number, end: number) => Span, length: number): Diagnostic {
  const token = error.token;
  const start = Number.isNaN(token.startOffset) ? length : token.startOffset;
  const end = Number.isNaN(token.endOffset ?? NaN) ? start : token.endOffset! + 1;
  const rule = error.context.ruleStack.at(-1) ?? "file";
  const found = token.tokenType === undefined || token.image === "" ? "the end of the file" : `\`${token.image}\``;
  // A missing token (Chevrotain names it in its message) is said as such; otherwise what the line wanted.
  const missing = error.name === "MismatchedTokenException" ? /--> (\w+) <--/.exec(error.message)?.[1] : undefined;
  const wanted = missing !== undefined ? (tokenWords[missing] ?? `\`${missing.replace(/Keyword$/, "").toLowerCase()}\``) : (expectations[rule] ?? "something else");
  return diagnostic("V2001", `unexpected ${found}: expected ${wanted}`, { span: spanOf(start, end) });
}
