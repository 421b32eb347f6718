import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { diagnostic, type Diagnostic } from "@vigil/diagnostics";

/**
 * The text of a regular file (without a leading byte-order mark), or a T0004 diagnostic saying why
 * it cannot be read. Anything else (a
 * FIFO, a socket, a device) is refused without reading from it: a FIFO would block the run forever.
 */
export async function readRegularFile(file: string, what = "trace"): Promise<string | Diagnostic> {
  const refuse = (reason: string) => diagnostic("T0004", `cannot read the ${what} \`${file}\`: ${reason}`, { file });
  let handle;
  try {
    // Non-blocking, so that opening a FIFO with no writer returns at once instead of waiting.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return refuse(code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code === "EISDIR" ? "it is a directory" : (error as Error).message);
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) return refuse("it is a directory");
    if (!stats.isFile()) {
      const kind = stats.isFIFO() ? "a named pipe (FIFO)" : stats.isSocket() ? "a socket" : "a device";
      return refuse(`it is ${kind}, not a regular file`);
    }
    const text = await handle.readFile({ encoding: "utf8" });
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch (error) {
    return refuse((error as Error).message);
  } finally {
    await handle.close();
  }
}
