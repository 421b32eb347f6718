/**
 * What a run of `vigilc` reads and writes: its standard streams, its working directory and
 * environment, and whether the process ends with it. The `vigilc` executable passes its process's
 * (process-main.ts); an embedder or a test passes its own.
 */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly colors: boolean;
  readonly cwd: string;
  /**
   * True when the process ends as soon as `run` returns (the `vigilc` executable does). Z3's worker
   * threads then end with the process instead of being stopped one by one: stopping them while the
   * thread of the last solver call is still winding down makes the WebAssembly runtime print
   * `received "cleanupThread" command from terminated worker` on stderr. Leave it unset when
   * embedding `run` in a process that keeps running; the solver runtime is then released.
   */
  readonly exitsAfterRun?: boolean;
  /** True when stderr is a terminal: corpus runs then draw a progress bar there. */
  readonly progress?: boolean;
  /** The environment (API keys, cache folders); `process.env` when absent. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Reads all of standard input, for a trace given as `-`. Without it, `-` is a file name. */
  readonly stdin?: () => Promise<string>;
}
