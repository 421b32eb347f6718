import type { IToken } from "chevrotain";
import { EmbeddedActionsParser } from "../chevrotain.js";
import { diagnostic, isEventTime, parseDateTime, type Diagnostic, type Span } from "@vigil/diagnostics";
import { looksLikeDuration, parseDuration } from "../duration.js";
import { decodeString, isJsonNumber } from "../literals.js";
import type { DecisionExpectation, EventsInput, Expectation, ExpectedDecision, ExpectedWitness, HandEvent, RuleReference, TestCase, TestFile, TestInput, TraceInput, VerdictExpectation } from "./ast.js";
import { misspelledStatuses } from "./misread-words.js";
import { Allow, Ask, At, Block, Broken, By, Colon, Comma, Decide, Dot, ErrorWord, Events, Expect, False, Ground, Hold, Holds, Identifier, LeftBrace, LeftBracket, Messages, Null, NumberLiteral, Ok, Output, Pending, Policy, RightBrace, RightBracket, Run, StringLiteral, Test, tokens, Trace, True, Violated, Warn, Word } from "./tokens.js";

/**
 * The parser of test files: a Chevrotain parser with error recovery whose embedded actions build
 * the tree of `ast.ts` directly (a test file has no formatter, so no concrete tree is kept). Bad
 * literals, positions and times are reported as it reads them (V2002–V2004, V2006); the caller
 * gives it, before each parse, how to measure spans and find the `///` text above a test.
 */
export class TestFileParser extends EmbeddedActionsParser {
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
