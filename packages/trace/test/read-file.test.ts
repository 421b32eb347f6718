import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readRegularFile, readRegularFilePieces } from "@vigil/trace";

/**
 * Reading a file piece by piece: the pieces make up the file's text, and after a piece that ends
 * at a line end, the byte given is where the rest of the text starts in the file.
 */
const directory = mkdtempSync(join(tmpdir(), "vigil-read-file-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

// A byte-order mark, characters of two, three and four bytes (some cut between two blocks of 7
// bytes), CRLF line ends, a blank line and a line longer than a block.
const text = ["é", "€ and 😀 together", "", "a line longer than seven bytes", "😀😀😀\r", "last, without a line break"].join("\n");
const file = join(directory, "run.jsonl");
writeFileSync(file, `\uFEFF${text}`);

async function piecesOf(start: number): Promise<{ text: string; nextLineByte?: number }[]> {
  const handle = await open(file);
  try {
    const pieces = [];
    for await (const piece of readRegularFilePieces(handle, { pieceBytes: 7, start })) pieces.push(piece);
    return pieces;
  } finally {
    await handle.close();
  }
}

describe("readRegularFilePieces", () => {
  it("gives the file's text, without its byte-order mark, and where each line after a piece starts", async () => {
    const pieces = await piecesOf(0);
    expect(pieces.map((piece) => piece.text).join("")).toBe(await readRegularFile(file));
    const starts = pieces.filter((piece) => piece.nextLineByte !== undefined);
    expect(starts.length).toBeGreaterThan(3);
    let sofar = "";
    for (const piece of pieces) {
      sofar += piece.text;
      if (piece.nextLineByte === undefined) continue;
      expect(sofar.endsWith("\n")).toBe(true);
      // Read from that byte, the file gives the rest of the text.
      expect((await piecesOf(piece.nextLineByte)).map((rest) => rest.text).join("")).toBe(text.slice(sofar.length));
    }
  });
});
