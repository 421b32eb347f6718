/**
 * One scheduled job of an open document (its check, its verdict lenses, its analysis findings), as
 * one object: the run that waits for its timer, and the latest run started, with the signal that
 * aborts it. Starting a run drops the one waiting and aborts the one before it, so that work on an
 * older version never goes on beside the newer; what a run does, and when it is scheduled, is the
 * owner's.
 */

/** A run of a job: what it was given, the signal that aborts it, and what it comes to. */
export interface JobRun<Input, Output> {
  readonly input: Input;
  readonly signal: AbortSignal;
  readonly output: Promise<Output>;
}

export class DebouncedJob<Input, Output> {
  private timer: NodeJS.Timeout | undefined;
  private controller: AbortController | undefined;
  private started: JobRun<Input, Output> | undefined;
  private startedAt = -Infinity;

  /**
   * @param work what a run does, given its input and the signal that aborts it.
   * @param unawaitedFailure told when a run its timer started fails (nobody awaits that run).
   */
  constructor(
    private readonly work: (input: Input, signal: AbortSignal) => Promise<Output>,
    private readonly unawaitedFailure?: (error: unknown, input: Input) => void,
  ) {}

  /** Whether a run waits for its timer. */
  get waiting(): boolean {
    return this.timer !== undefined;
  }

  /** Milliseconds since the latest run started (Infinity before the first). */
  get msSinceStart(): number {
    return performance.now() - this.startedAt;
  }

  /** The latest run started, until the next one starts (aborted or not, settled or not). */
  get latest(): JobRun<Input, Output> | undefined {
    return this.started;
  }

  /** Runs `input` after `delayMs`, in place of the run waiting. */
  schedule(input: Input, delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const output = this.run(input);
      if (this.unawaitedFailure !== undefined) void output.catch((error: unknown) => this.unawaitedFailure!(error, input));
    }, delayMs);
  }

  /** Drops the run waiting, if any; the latest run goes on. */
  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Aborts the latest run (nothing once it is aborted); a run waiting still starts. */
  abort(): void {
    this.controller?.abort();
  }

  /** Drops the run waiting and aborts the latest: the job's work is stale. */
  stop(): void {
    this.cancel();
    this.abort();
  }

  /** Runs `input` now: drops the run waiting, aborts the latest, and starts this one with a signal of its own. */
  run(input: Input): Promise<Output> {
    this.cancel();
    this.startedAt = performance.now();
    this.abort();
    const controller = new AbortController();
    this.controller = controller;
    const output = this.work(input, controller.signal);
    this.started = { input, signal: controller.signal, output };
    return output;
  }
}
