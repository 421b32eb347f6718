import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { diagnostic, stripByteOrderMark, type Diagnostic } from "@vigil/diagnostics";

/**
 * Opens a file for reading if it is a regular file; otherwise a T0004 diagnostic saying why it
 * cannot be read. Anything else (a FIFO, a socket, a device) is refused without reading from it: a
 * FIFO would block the run forever, a device could never end. The caller closes the handle.
 */
export async function openRegularFile(file: string, what = "trace"): Promise<FileHandle | Diagnostic> {
  const refuse = (reason: string) => diagnostic("T0004", `cannot read the ${what} \`${file}\`: ${reason}`, { file });
  let handle: FileHandle;
  try {
    // Non-blocking, so that opening a FIFO with no writer returns at once instead of waiting.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return refuse(code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code === "EISDIR" ? "it is a directory" : (error as Error).message);
  }
  try {
    const stats = await handle.stat();
    if (stats.isFile()) return handle;
    await handle.close();
    if (stats.isDirectory()) return refuse("it is a directory");
    const kind = stats.isFIFO() ? "a named pipe (FIFO)" : stats.isSocket() ? "a socket" : "a device";
    return refuse(`it is ${kind}, not a regular file`);
  } catch (error) {
    await handle.close();
    return refuse((error as Error).message);
  }
}

/** The text of a regular file (without a leading byte-order mark), or a T0004 diagnostic. */
export async function readRegularFile(file: string, what = "trace"): Promise<string | Diagnostic> {
  const handle = await openRegularFile(file, what);
  if (!isHandle(handle)) return handle;
  try {
    const text = await handle.readFile({ encoding: "utf8" });
    return stripByteOrderMark(text);
  } catch (error) {
    return diagnostic("T0004", `cannot read the ${what} \`${file}\`: ${(error as Error).message}`, { file });
  } finally {
    await handle.close();
  }
}

/**
 * How many bytes a piece of a streamed file holds. Small on purpose: the events read from one
 * piece are alive together until the piece's batch has been judged, and a megabyte of JSON Lines
 * holds some 11,000 events — more than the young generation of V8's heap collects cheaply, so they
 * were copied and promoted to the old generation, where the collector had to find them again. With
 * 64 KiB (about 700 events of 90 bytes) they die young: the reader alone ran 1.9× faster and a
 * streamed 2.2 GB check used 238 MB instead of 428 MB at its peak (docs/performance.md).
 */
export const PIECE_BYTES = 1 << 16;

/**
 * The text of a regular file piece by piece (UTF-8 decoded, a leading byte-order mark dropped), for
 * a reader that must not hold the whole file: a multi-gigabyte trace is more text than one string
 * can hold.
 */
export async function* readRegularFileInPieces(handle: FileHandle, pieceBytes = PIECE_BYTES): AsyncGenerator<string> {
  for await (const piece of readRegularFilePieces(handle, { pieceBytes })) yield piece.text;
}

/** A piece of a file's text, and where the file could be read again from after it. */
export interface FilePiece {
  readonly text: string;
  /**
   * When the text read so far ends at a line end: the byte of the file where the next line starts,
   * from which a reading of the rest can start (see `RecordingReader.resumePoint`).
   */
  readonly nextLineByte?: number;
}

/**
 * The text of a regular file piece by piece, from byte `start` (a line's first byte; the beginning
 * by default), with the byte where the next line starts after each piece that ends at a line end.
 * Each block read is cut after its last line break: a UTF-8 decoder holds nothing after a `\n`, so
 * the text up to there is exactly the text of the bytes up to there, whatever the bytes before.
 *
 * Blocks are read at explicit positions (not through a stream, which takes the handle with it when
 * it ends early), so a handle can be read again from another byte; the next block is read while
 * the current one is decoded and handed out.
 */
export async function* readRegularFilePieces(handle: FileHandle, { pieceBytes = PIECE_BYTES, start = 0 }: { pieceBytes?: number; start?: number } = {}): AsyncGenerator<FilePiece> {
  const decoder = new StringDecoder("utf8");
  const blocks = [Buffer.allocUnsafe(pieceBytes), Buffer.allocUnsafe(pieceBytes)];
  let byte = start;
  let first = start === 0;
  let current = 0;
  let reading = handle.read(blocks[current]!, 0, pieceBytes, byte);
  try {
    for (;;) {
      const { bytesRead } = await reading;
      if (bytesRead === 0) break;
      const bytes = blocks[current]!.subarray(0, bytesRead);
      // The other block is free: the decoder copies what it keeps of this one.
      current = 1 - current;
      reading = handle.read(blocks[current]!, 0, pieceBytes, byte + bytesRead);
      const lastLineBreak = bytes.lastIndexOf(10);
      let text = decoder.write(lastLineBreak < 0 ? bytes : bytes.subarray(0, lastLineBreak + 1));
      if (first) text = stripByteOrderMark(text);
      first = false;
      if (lastLineBreak < 0) yield { text };
      else {
        const rest = lastLineBreak + 1 < bytes.length ? decoder.write(bytes.subarray(lastLineBreak + 1)) : "";
        yield { text, nextLineByte: byte + lastLineBreak + 1 };
        if (rest !== "") yield { text: rest };
      }
      byte += bytesRead;
    }
  } finally {
    // A reading stopped early still has a block on its way; the handle is closed only after it.
    await reading.catch(() => undefined);
  }
  const rest = decoder.end();
  if (rest !== "") yield { text: first ? stripByteOrderMark(rest) : rest };
}

export function isHandle(value: FileHandle | Diagnostic): value is FileHandle {
  return !("code" in value && "severity" in value);
}
