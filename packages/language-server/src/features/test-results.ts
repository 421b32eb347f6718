import { parseTestFile, type Diagnostic, type Span, type TestCase, type TestFile, type TestFileResult, type TestResult } from "@vigil/compiler";

/**
 * What is known of a test file's tests while it is edited: the latest result of each test, kept
 * with the text it ran on, and which of them still describe the current text. A test's result is
 * current while the test's own text has not changed since it ran (its spans are moved with the text
 * around it) and its policy is the same file with the same text; otherwise the test must run again.
 */

/** Where the characters of one text are in a later one: the parts both share at the start and at the end. */
export class TextShift {
  /** Characters the two texts share at the start, and at the end (never overlapping). */
  private readonly head: number;
  private readonly tail: number;
  private readonly delta: number;

  constructor(
    readonly before: string,
    readonly after: string,
  ) {
    const limit = Math.min(before.length, after.length);
    let head = 0;
    while (head < limit && before.charCodeAt(head) === after.charCodeAt(head)) head++;
    let tail = 0;
    while (tail < limit - head && before.charCodeAt(before.length - 1 - tail) === after.charCodeAt(after.length - 1 - tail)) tail++;
    this.head = head;
    this.tail = tail;
    this.delta = after.length - before.length;
  }

  /** Whether nothing changed. */
  get same(): boolean {
    return this.delta === 0 && this.head === this.before.length;
  }

  /** The span in the later text, or undefined when it touches the part that changed. */
  span<S extends Pick<Span, "start" | "end">>(span: S): S | undefined {
    if (this.same || span.end <= this.head) return span;
    if (span.start >= this.before.length - this.tail) return { ...span, start: span.start + this.delta, end: span.end + this.delta };
    return undefined;
  }

  /** A diagnostic of the earlier text in the later one (its related places and fix moved too), or undefined when it is about text that changed. */
  diagnostic(diagnostic: Diagnostic, file: string): Diagnostic | undefined {
    if (this.same) return diagnostic;
    const span = diagnostic.span === undefined ? undefined : this.span(diagnostic.span);
    if (diagnostic.span !== undefined && span === undefined) return undefined;
    const related = diagnostic.related?.flatMap((information) => {
      if (information.file !== undefined && information.file !== file) return [information];
      const moved = this.span(information.span);
      return moved === undefined ? [] : [{ ...information, span: moved }];
    });
    const edits = diagnostic.fix?.edits.map((edit) => ({ ...edit, span: this.span(edit.span) }));
    const fix = diagnostic.fix !== undefined && edits!.every((edit) => edit.span !== undefined) ? { ...diagnostic.fix, edits: edits as { span: Span; newText: string }[] } : undefined;
    const { fix: _fix, related: _related, span: _span, ...rest } = diagnostic;
    return { ...rest, ...(span !== undefined ? { span } : {}), ...(related !== undefined && related.length > 0 ? { related } : {}), ...(fix !== undefined ? { fix } : {}) };
  }
}

/** A test file's text as the reader sees it: one version of an open document. */
export interface TestView {
  readonly text: string;
  readonly parsed: TestFile;
  /** The test file (a path, for resolving the files it names). */
  readonly file: string;
  /** The policy file it names, resolved; undefined when it names none. */
  readonly policyFile?: string;
}

/** What a run of some of a file's tests rested on: the test file's text and its policy's. */
interface Basis {
  readonly text: string;
  readonly policyFile?: string;
  readonly policyText?: string;
}

/** The latest result of a test, and what it rested on. */
interface KnownTest extends Basis {
  readonly result: TestResult;
}

/** A current result of a test of the view, and how to move its spans into the view's text. */
export interface Standing {
  readonly result: TestResult;
  readonly shift: TextShift;
}

/** The runner's answer about the view, as far as it is still current. */
export interface Standings {
  /** The runner's diagnostics of the file as a whole (the policy, duplicate names), moved; the reader's own are not among them. */
  readonly fileDiagnostics: readonly Diagnostic[];
  /** The tests of the view with a current result. */
  readonly tests: ReadonlyMap<TestCase, Standing>;
}

export class TestResults {
  private file: (Basis & { readonly diagnostics: readonly Diagnostic[] }) | undefined;
  private tests: KnownTest[] = [];

  /** Takes in a run of the text (of some of its tests, or all). */
  record(text: string, result: TestFileResult): void {
    const basis: Basis = {
      text,
      ...(result.policyFile !== undefined ? { policyFile: result.policyFile } : {}),
      ...(result.policySource !== undefined ? { policyText: result.policySource } : {}),
    };
    // The reader's diagnostics are shown from the current text, never from a run.
    const parsed = parseTestFile(text);
    const read = new Set(parsed.diagnostics.map(diagnosticKey));
    this.file = { ...basis, diagnostics: result.diagnostics.filter((d) => !read.has(diagnosticKey(d))) };
    const ran = new Set(result.tests.map((test) => test.name));
    const named = new Set(parsed.tests.map((test) => test.name));
    // Results of tests the text no longer has are dropped; a test that ran replaces what was known of its name.
    this.tests = [...this.tests.filter((known) => !ran.has(known.result.name) && named.has(known.result.name)), ...result.tests.map((test) => ({ ...basis, result: test }))];
  }

  /**
   * What is current for the view: `policyText` is the text of its policy open in the editor
   * (undefined when it is not open, and the file on disk is taken to be what the runs read).
   */
  standings(view: TestView, policyText: string | undefined): Standings {
    const shifts = new Map<string, TextShift>();
    const shiftFrom = (text: string): TextShift => {
      let shift = shifts.get(text);
      if (shift === undefined) shifts.set(text, (shift = new TextShift(text, view.text)));
      return shift;
    };
    const current = (basis: Basis): boolean => basis.policyFile === view.policyFile && (policyText === undefined || policyText === basis.policyText);
    const fileDiagnostics: Diagnostic[] = [];
    if (this.file !== undefined && current(this.file)) {
      const shift = shiftFrom(this.file.text);
      for (const diagnostic of this.file.diagnostics) {
        const moved = shift.diagnostic(diagnostic, view.file);
        if (moved !== undefined) fileDiagnostics.push(moved);
      }
    }
    const tests = new Map<TestCase, Standing>();
    for (const test of view.parsed.tests) {
      for (let index = this.tests.length - 1; index >= 0; index--) {
        const known = this.tests[index]!;
        if (known.result.name !== test.name || !current(known)) continue;
        const shift = shiftFrom(known.text);
        const span = shift.span(known.result.span);
        if (span !== undefined && span.start === test.span.start && span.end === test.span.end) {
          tests.set(test, { result: known.result, shift });
          break;
        }
      }
    }
    return { fileDiagnostics, tests };
  }

  /** Whether the latest run was of exactly this text, with the policy as it is now. */
  ranOn(view: TestView, policyText: string | undefined): boolean {
    const file = this.file;
    return file !== undefined && file.text === view.text && file.policyFile === view.policyFile && (policyText === undefined || policyText === file.policyText);
  }
}

function diagnosticKey(diagnostic: Diagnostic): string {
  return `${diagnostic.code} ${diagnostic.span?.start ?? -1} ${diagnostic.span?.end ?? -1} ${diagnostic.message}`;
}
