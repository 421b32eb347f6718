import type { CliIo } from "./io.js";

/**
 * The process around a `run` of `vigilc` (or of its hook): standard input and output, the exit.
 * The `vigilc` entry (main.ts) and the hook's startup snapshot (enforcement/hook-snapshot.ts) both end here,
 * so that a hook answered from the snapshot writes and exits exactly as one answered from main.ts.
 */
export async function runProcess(run: (argv: readonly string[], io: CliIo) => Promise<number>, argv: readonly string[]): Promise<never> {
  // A reader that goes away early (`vigilc lower … | head`) closes the pipe; what is left to write
  // is dropped instead of crashing the process with an unhandled EPIPE error. Any other failure to
  // write the output (a full disk) makes the run fail with exit code 2.
  let stdoutClosed = false;
  let writeFailed = false;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (stream === process.stdout) stdoutClosed = true;
      if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") writeFailed = true;
    });
  }

  const code = await run(argv, {
    stdout: (text) => {
      if (!stdoutClosed) process.stdout.write(text);
    },
    stderr: (text) => process.stderr.write(text),
    colors: process.stdout.isTTY === true && process.env["NO_COLOR"] === undefined,
    progress: process.stderr.isTTY === true,
    cwd: process.cwd(),
    exitsAfterRun: true,
    stdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
  });

  // End the process explicitly: the solver's worker threads (if `--engine smt` ran) end with it.
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(writeFailed ? 2 : code);
}

/** Resolves once everything written to `stream` so far has been handed to the operating system. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) resolve();
    else stream.write("", () => resolve());
  });
}
