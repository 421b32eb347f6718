import { dirname, resolve } from "node:path";
import { parseTestFile, readRegularFile, type Diagnostic, type TestFileResult } from "@vigil/compiler";
import { ErrorCodes, LSPErrorCodes, ResponseError, type CodeLens, type Diagnostic as LspDiagnostic } from "vscode-languageserver/node";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { internalFailure, runTestResult, runTests, testDiagnostics, testLenses } from "../features/tests.js";
import { TestResults, type TestView } from "../features/test-results.js";
import { TextPositions } from "../positions.js";
import type { RunTestArguments, RunTestResult } from "../protocol.js";
import { uriToPath } from "../uris.js";

/**
 * The open test documents (`*.vigiltest`) and their runs. The reader's diagnostics follow every
 * change (debounced as a policy's are). The tests run on open, on save, and when a file they name
 * (the policy, a trace) is saved or changes on disk: all of them. After an edit of the test file or
 * of its policy in the editor, once both have been still for a moment, the tests whose results no
 * longer hold run again if their events are written by hand (milliseconds); a test that reads a
 * trace file waits for a save or a click on its lens. A newer edit aborts a run in flight. Files
 * open in the editor are read from the editor, saved or not.
 *
 * It talks to the client only through its host (the server).
 */

export interface TestHost {
  /** The open document with this URI. */
  document(uri: string): TextDocument | undefined;
  /** Every open document. */
  openDocuments(): readonly TextDocument[];
  /** The path a test document's relative paths start from: its file, or a file in the workspace for an unsaved buffer. */
  fileOf(uri: string): string;
  readonly diagnosticsDelayMs: number;
  /** Where a diagnostic's code is explained. */
  readonly codeLink: ((code: string) => string | undefined) | undefined;
  /** Publishes a document's diagnostics (of a version; of none when it is closed). */
  publish(uri: string, version: number | undefined, diagnostics: LspDiagnostic[]): void;
  /** Asks the client for fresh lenses. */
  refreshLenses(): void;
  /** The files the tests name changed (for the file watchers). */
  namedFilesChanged(): void;
  logError(what: string, error: unknown): void;
}

/** How long a test file and its policy must be still before the tests an edit touched run again. */
const rerunIdleMs = 300;

type Selection = "all" | "stale" | { readonly name: string };

interface TestDocumentState {
  view?: TestView & { readonly version: number; readonly positions: TextPositions };
  readonly results: TestResults;
  /** The next read of the text, and when the latest started. */
  readTimer?: NodeJS.Timeout;
  lastRead?: number;
  /** The next run, and which tests it runs ("all" wins over "stale"). */
  pending?: { readonly selection: "all" | "stale"; readonly timer: NodeJS.Timeout };
  /** The runs of the current texts; aborted by a newer edit of the test file or its policy. */
  work?: AbortController;
  /** The run in flight, and the text of the policy it read (once it has). */
  running?: { policyText?: string };
  /** Runs one after another; this settles when the last one queued has. */
  queue: Promise<unknown>;
  /** A run that failed inside the server, said on the file until the next run. */
  failure?: string;
}

export class TestDocuments {
  private readonly states = new Map<string, TestDocumentState>();

  constructor(private readonly host: TestHost) {}

  has(uri: string): boolean {
    return this.states.has(uri);
  }

  opened(uri: string): void {
    this.forget(uri);
    this.states.set(uri, { results: new TestResults(), queue: Promise.resolve() });
    this.read(uri);
    this.scheduleRun(uri, "all", 0);
  }

  /** The text changed: read it again soon, and run what the change touched once it is still. */
  changed(uri: string): void {
    const state = this.states.get(uri);
    // Opening a document also announces its content, read already.
    if (state === undefined || state.view?.version === this.host.document(uri)?.version) return;
    this.abort(state);
    const quiet = state.readTimer === undefined && performance.now() - (state.lastRead ?? -Infinity) >= this.host.diagnosticsDelayMs;
    clearTimeout(state.readTimer);
    state.readTimer = setTimeout(() => this.read(uri), quiet ? 0 : this.host.diagnosticsDelayMs);
    this.scheduleRun(uri, "stale", rerunIdleMs);
  }

  saved(uri: string): void {
    this.scheduleRun(uri, "all", 0);
  }

  closed(uri: string): void {
    this.forget(uri);
    this.states.delete(uri);
    this.host.publish(uri, undefined, []);
  }

  /** A policy open in the editor was edited (or opened): the tests of the files that name it may be stale. */
  policyEdited(file: string): void {
    const text = this.openText(file);
    for (const [uri, state] of this.states) {
      if (state.view?.policyFile !== file) continue;
      // A run that read another text of the policy is of no use; one that read this text (the
      // policy was opened as it is on disk) goes on.
      const read = state.running?.policyText;
      if (read !== undefined && read !== text) this.abort(state);
      this.scheduleRun(uri, "stale", rerunIdleMs);
    }
  }

  /**
   * A file changed as the tests read it: a policy or trace saved or changed on disk, or a policy
   * closed in the editor (its file is read from now on). Every test of the files naming it runs.
   */
  fileChanged(file: string): void {
    for (const [uri, state] of this.states) {
      if (state.view === undefined || !namedFiles(state.view).includes(file)) continue;
      this.abort(state);
      this.scheduleRun(uri, "all", 0);
    }
  }

  /** The policies and traces the open test files name (for watching them). */
  namedFiles(): string[] {
    return [...new Set([...this.states.values()].flatMap((state) => (state.view !== undefined ? namedFiles(state.view) : [])))].sort();
  }

  /** The lenses of a test document, once the runs queued for it have ended. */
  async lenses(uri: string): Promise<CodeLens[]> {
    const state = this.stateOf(uri);
    // A run of every test that is due (on open, on save) starts now rather than after its timer.
    if (state.pending?.selection === "all") {
      clearTimeout(state.pending.timer);
      delete state.pending;
      this.enqueueUnawaited(uri, "all");
    }
    await state.queue;
    const view = this.viewOf(uri, state);
    return testLenses(view, state.results.standings(view, this.policyText(view)), uri, view.positions);
  }

  /** `vigil.runTest`: runs a file's tests, or one of them, and answers what ran. */
  async run(args: RunTestArguments): Promise<RunTestResult> {
    if (!this.states.has(args.uri)) {
      // A test file that is not open is run from its file, and nothing is published.
      const file = uriToPath(args.uri);
      const text = file !== undefined ? await readRegularFile(file, "test file") : undefined;
      if (file === undefined || typeof text !== "string") throw new ResponseError(ErrorCodes.InvalidParams, `unknown test file ${args.uri}: it is not open and cannot be read`);
      const names = args.name !== undefined ? new Set([args.name]) : undefined;
      return runTestResult(args.uri, await runTests(text, file, { readText: this.readText, ...(names !== undefined ? { names } : {}) }));
    }
    const result = await this.enqueue(args.uri, args.name !== undefined ? { name: args.name } : "all");
    if (result === undefined) throw new ResponseError(LSPErrorCodes.ContentModified, "the test file or its policy changed while the tests ran; they run again");
    return runTestResult(args.uri, result);
  }

  // Reading and publishing.

  private read(uri: string): void {
    const state = this.states.get(uri);
    if (state === undefined) return;
    clearTimeout(state.readTimer);
    state.readTimer = undefined;
    state.lastRead = performance.now();
    this.viewOf(uri, state);
    this.publish(uri, state);
  }

  /** The view of the document's current text, read now if the latest read is older. */
  private viewOf(uri: string, state: TestDocumentState): NonNullable<TestDocumentState["view"]> {
    const document = this.host.document(uri);
    if (document === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `unknown document ${uri}: it is not open`);
    if (state.view?.version === document.version) return state.view;
    const text = document.getText();
    const file = this.host.fileOf(uri);
    const parsed = parseTestFile(text);
    const before = state.view !== undefined ? namedFiles(state.view).join("\n") : "";
    state.view = { version: document.version, text, positions: new TextPositions(text), parsed, file, ...(parsed.policy !== undefined ? { policyFile: resolve(dirname(file), parsed.policy.path) } : {}) };
    if (namedFiles(state.view).join("\n") !== before) this.host.namedFilesChanged();
    return state.view;
  }

  private publish(uri: string, state: TestDocumentState): void {
    const view = state.view;
    if (view === undefined) return;
    const standings = state.results.standings(view, this.policyText(view));
    const codeLink = this.host.codeLink;
    const diagnostics = testDiagnostics(view, standings, { uri, version: view.version, positions: view.positions, ...(codeLink !== undefined ? { codeLink } : {}) });
    if (state.failure !== undefined) diagnostics.unshift(internalFailure(state.failure));
    this.host.publish(uri, view.version, diagnostics);
  }

  // Running.

  private scheduleRun(uri: string, selection: "all" | "stale", delayMs: number): void {
    const state = this.states.get(uri);
    // A pending run of every test is neither narrowed nor put off.
    if (state === undefined || state.pending?.selection === "all") return;
    clearTimeout(state.pending?.timer);
    state.pending = {
      selection,
      timer: setTimeout(() => {
        delete state.pending;
        this.enqueueUnawaited(uri, selection);
      }, delayMs),
    };
  }

  /** Queues a run nobody waits for; it publishes what it finds. */
  private enqueueUnawaited(uri: string, selection: Selection): void {
    this.enqueue(uri, selection).catch((error: unknown) => this.host.logError(`running the tests of ${uri}`, error));
  }

  /** Queues a run of the document's current text; resolves to its result, or undefined when there was nothing to run or it was aborted. */
  private enqueue(uri: string, selection: Selection): Promise<TestFileResult | undefined> {
    const state = this.states.get(uri);
    if (state === undefined) return Promise.resolve(undefined);
    const work = (state.work ??= new AbortController());
    const run = state.queue.then(() => this.runNow(uri, state, selection, work.signal));
    state.queue = run.catch(() => undefined);
    return run;
  }

  private async runNow(uri: string, state: TestDocumentState, selection: Selection, signal: AbortSignal): Promise<TestFileResult | undefined> {
    if (signal.aborted || this.states.get(uri) !== state || this.host.document(uri) === undefined) return undefined;
    const view = this.viewOf(uri, state);
    let names: Set<string> | undefined;
    if (selection === "stale") {
      // Nothing runs while the reader has errors. Unasked, only tests with events written by hand
      // run (and none, to see the policy again, when only the file's other parts changed).
      if (view.parsed.diagnostics.some((d) => d.severity === "error")) return undefined;
      const policyText = this.policyText(view);
      const standings = state.results.standings(view, policyText);
      names = new Set(view.parsed.tests.filter((test) => !standings.tests.has(test) && test.input?.kind !== "trace").map((test) => test.name));
      if (names.size === 0 && state.results.ranOn(view, policyText)) return undefined;
    } else if (selection !== "all") names = new Set([selection.name]);
    let result: TestFileResult;
    const running: NonNullable<TestDocumentState["running"]> = {};
    state.running = running;
    const readText = async (file: string, what: string): Promise<string | Diagnostic> => {
      const text = await this.readText(file, what);
      if (file === view.policyFile && typeof text === "string") running.policyText = text;
      return text;
    };
    try {
      result = await runTests(view.text, view.file, { readText, signal, ...(names !== undefined ? { names } : {}) });
    } catch (error) {
      if (signal.aborted) return undefined;
      // The runner does not throw on bad input; anything else is the server's bug, said on the file.
      this.host.logError(`running the tests of ${uri}`, error);
      state.failure = error instanceof Error ? error.message : String(error);
      this.publish(uri, state);
      return undefined;
    } finally {
      if (state.running === running) delete state.running;
    }
    delete state.failure;
    state.results.record(view.text, result);
    if (this.states.get(uri) !== state) return result;
    this.publish(uri, state);
    this.host.refreshLenses();
    return result;
  }

  /** The text of a policy open in the editor; undefined when it is not open (its file is what the runs read). */
  private policyText(view: TestView): string | undefined {
    return view.policyFile !== undefined ? this.openText(view.policyFile) : undefined;
  }

  private openText(file: string): string | undefined {
    return this.host.openDocuments().find((document) => uriToPath(document.uri) === file)?.getText();
  }

  /**
   * How the runner reads the files the tests name: an open document first, saved or not. It first
   * lets the server read the messages that came in while the runner judged (it yields only when it
   * reads), so that an edit made meanwhile aborts the run before its next trace.
   */
  private readonly readText = async (file: string, what: string): Promise<string | Diagnostic> => {
    await new Promise((resolve) => setImmediate(resolve));
    return this.openText(file) ?? readRegularFile(file, what);
  };

  private stateOf(uri: string): TestDocumentState {
    const state = this.states.get(uri);
    if (state === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `unknown document ${uri}: it is not open`);
    return state;
  }

  private abort(state: TestDocumentState): void {
    state.work?.abort();
    delete state.work;
  }

  private forget(uri: string): void {
    const state = this.states.get(uri);
    if (state === undefined) return;
    this.abort(state);
    clearTimeout(state.readTimer);
    clearTimeout(state.pending?.timer);
  }
}

/** The files a test file names: its policy and the traces of its tests. */
function namedFiles(view: TestView): string[] {
  const base = dirname(view.file);
  const traces = view.parsed.tests.flatMap((test) => (test.input?.kind === "trace" ? [resolve(base, test.input.path)] : []));
  return [...(view.policyFile !== undefined ? [view.policyFile] : []), ...traces];
}
