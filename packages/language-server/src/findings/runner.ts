import { Worker } from "node:worker_threads";
import type { Diagnostic } from "@vigil/compiler";
import type { DiffAnswer, WorkerAnswer, WorkerRequest } from "./messages.js";

/**
 * Where the worker's module is, beside the module that starts it. The extension's bundle, which
 * puts the server in one file, names its own bundle of the worker here (esbuild's `define`).
 */
declare const VIGIL_ANALYSIS_WORKER: string | undefined;
const workerModule = typeof VIGIL_ANALYSIS_WORKER === "string" ? VIGIL_ANALYSIS_WORKER : "./worker.js";

/** Why a request ended without an answer. */
export class AnalysisFailed extends Error {}

export interface AnalysisWorkerOptions {
  /** A request still running after this long is stopped (the thread is ended), failing with `AnalysisFailed`. */
  readonly timeLimitMs?: number;
  /** The thread (and its solver's memory) is let go after this long without a request. */
  readonly idleMs?: number;
}

/** A request as the server asks it; the runner numbers it. */
type Question = WorkerRequest extends infer R ? (R extends WorkerRequest ? Omit<R, "id"> : never) : never;

/**
 * The analysis worker thread, seen from the server: requests run one at a time, in order. A
 * request whose signal aborts (the document changed) resolves to undefined: skipped if it had not
 * started, and if it had, the thread is ended, which is the only way to stop the solver at once;
 * the next request starts a new thread. A thread that fails, or a request past the time limit,
 * fails that request with the reason, and never the server.
 */
export class AnalysisWorker {
  private thread: Worker | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly timeLimitMs: number;
  private readonly idleMs: number;

  constructor(options: AnalysisWorkerOptions = {}) {
    this.timeLimitMs = options.timeLimitMs ?? 120_000;
    this.idleMs = options.idleMs ?? 60_000;
  }

  /** The findings of a policy text (A0001–A0007, spans into `text`), or undefined when aborted. */
  async analyze(question: Omit<Extract<Question, { kind: "analyze" }>, "kind">, signal?: AbortSignal): Promise<readonly Diagnostic[] | undefined> {
    const answer = await this.ask({ kind: "analyze", ...question }, signal);
    return answer === undefined ? undefined : "diagnostics" in answer ? answer.diagnostics : unexpected();
  }

  /** The diff of two versions of a policy, or undefined when aborted. */
  async diff(question: Omit<Extract<Question, { kind: "diff" }>, "kind">, signal?: AbortSignal): Promise<DiffAnswer | undefined> {
    const answer = await this.ask({ kind: "diff", ...question }, signal);
    return answer === undefined ? undefined : "diff" in answer ? answer.diff : unexpected();
  }

  /** Ends the thread (the server is shutting down). */
  async dispose(): Promise<void> {
    clearTimeout(this.idleTimer);
    const thread = this.thread;
    this.thread = undefined;
    await thread?.terminate();
  }

  private ask(question: Question, signal: AbortSignal | undefined): Promise<Extract<WorkerAnswer, { ok: true }> | undefined> {
    const turn = this.queue.then(() => this.run(question, signal));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private run(question: Question, signal: AbortSignal | undefined): Promise<Extract<WorkerAnswer, { ok: true }> | undefined> {
    if (signal?.aborted === true) return Promise.resolve(undefined);
    clearTimeout(this.idleTimer);
    const thread = this.started();
    const id = this.nextId++;
    const request: WorkerRequest = { ...question, id };
    return new Promise((resolve, reject) => {
      const settle = () => {
        thread.off("message", onMessage);
        thread.off("error", onError);
        thread.off("exit", onExit);
        signal?.removeEventListener("abort", onAbort);
        clearTimeout(limit);
        this.idleTimer = setTimeout(() => void this.dispose(), this.idleMs);
        this.idleTimer.unref();
      };
      const end = () => {
        if (this.thread === thread) this.thread = undefined;
        void thread.terminate();
      };
      const onMessage = (answer: WorkerAnswer) => {
        if (answer.id !== id) return;
        settle();
        if (answer.ok) resolve(answer);
        else reject(new AnalysisFailed(answer.error));
      };
      const onError = (error: Error) => {
        settle();
        end();
        reject(new AnalysisFailed(`the analysis failed: ${error.message}`));
      };
      const onExit = (code: number) => {
        settle();
        if (this.thread === thread) this.thread = undefined;
        reject(new AnalysisFailed(`the analysis stopped (its thread exited with code ${code})`));
      };
      const onAbort = () => {
        settle();
        end();
        resolve(undefined);
      };
      const limit = setTimeout(() => {
        settle();
        end();
        reject(new AnalysisFailed(`the analysis did not finish within ${this.timeLimitMs >= 1000 ? `${Math.round(this.timeLimitMs / 1000)} s` : `${this.timeLimitMs} ms`}`));
      }, this.timeLimitMs);
      thread.on("message", onMessage);
      thread.on("error", onError);
      thread.on("exit", onExit);
      signal?.addEventListener("abort", onAbort, { once: true });
      thread.postMessage(request);
    });
  }

  private started(): Worker {
    if (this.thread !== undefined) return this.thread;
    // None of the server's Node options: an inspector port or a module condition (a test runner's)
    // is the server's own, and the worker needs none.
    const thread = new Worker(new URL(workerModule, import.meta.url), { execArgv: [] });
    // An idle thread does not keep the server's process alive.
    thread.unref();
    this.thread = thread;
    return thread;
  }
}

function unexpected(): never {
  throw new AnalysisFailed("the analysis worker answered a different question");
}
