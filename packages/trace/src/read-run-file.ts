import { diagnostic, stripByteOrderMark, type Diagnostic } from "@vigil/diagnostics";
import type { TraceFormat } from "./formats/detect.js";
import { mayBeRunFile, RUN_FILE_HEAD, splitRunFile, type RunFile } from "./formats/tau-bench.js";
import { isHandle, openRegularFile } from "./read-file.js";

export type { RecordingRun, RunFile } from "./formats/tau-bench.js";
export { mayBeRunFile, splitRunFile } from "./formats/tau-bench.js";

/** A file of several runs, read whole: its text (for code frames) and its runs. */
export interface ReadRunFileResult extends RunFile {
  readonly text: string;
}

/**
 * Reads a file that holds several runs (a τ-bench results file) and cuts it into its runs; undefined
 * when the file is one run (or `format` names a format of one run), or a T0004 diagnostic when it
 * cannot be read. Only a file whose beginning may be such a file (see `mayBeRunFile`) is read
 * whole: any other is left to be read as one run, piece by piece.
 */
export async function readRunFile(file: string, options: { readonly format?: TraceFormat | "auto" } = {}): Promise<ReadRunFileResult | undefined | Diagnostic> {
  const format = options.format ?? "auto";
  if (format !== "auto" && format !== "tau-bench") return undefined;
  const handle = await openRegularFile(file);
  if (!isHandle(handle)) return handle;
  try {
    if (format === "auto") {
      // The first 64 KiB: at most as many characters (a character cut at the end is decoded as U+FFFD).
      const head = Buffer.allocUnsafe(RUN_FILE_HEAD);
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      const text = head.subarray(0, bytesRead).toString("utf8");
      if (!mayBeRunFile(stripByteOrderMark(text))) return undefined;
    }
    const text = stripByteOrderMark(await handle.readFile({ encoding: "utf8" }));
    const runs = splitRunFile(text, { format });
    return runs === undefined ? undefined : { ...runs, text };
  } catch (error) {
    return diagnostic("T0004", `cannot read the trace \`${file}\`: ${(error as Error).message}`, { file });
  } finally {
    await handle.close();
  }
}
