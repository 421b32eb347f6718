// Benchmark: events per second of the streaming recording reader on a generated canonical JSON
// Lines trace, against the floor any reader of the format pays (reading the file in pieces,
// cutting it into lines and JSON.parse of each line). A benchmark, not a test.
//
//   npx tsc -b packages/trace && node scripts/bench-reader.mjs [events]
//
// The trace is written to the system's temporary directory and removed at the end.
import { createReadStream, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createRecordingReader } from "@vigil/trace";

const events = Number(process.argv[2] ?? 1_000_000);
const directory = mkdtempSync(join(tmpdir(), "vigil-bench-reader-"));
const file = join(directory, "trace.jsonl");

const tools = ["read_file", "write_file", "search", "send_email", "fetch"];
const lines = [];
for (let i = 0; i < events; i++) {
  lines.push(JSON.stringify({ action: tools[i % 5], args: { path: `/data/file-${i % 97}.txt`, query: `term ${i}`, limit: i % 50 }, status: i % 13 ? "ok" : "error", output: `result ${i}` }));
}
writeFileSync(file, lines.join("\n") + "\n");
lines.length = 0;
const megabytes = statSync(file).size / 2 ** 20;

/** Streams the file in 64 KiB pieces of text, handing each to `take`. */
async function eachPiece(take) {
  for await (const piece of createReadStream(file, { encoding: "utf8", highWaterMark: 1 << 16 })) take(piece);
}

/** The floor: pieces cut into lines (a line may span pieces), and each line parsed. */
async function floor() {
  let count = 0;
  let rest = "";
  await eachPiece((piece) => {
    const text = rest + piece;
    let start = 0;
    let newline;
    while ((newline = text.indexOf("\n", start)) >= 0) {
      if (newline > start) {
        JSON.parse(text.slice(start, newline));
        count++;
      }
      start = newline + 1;
    }
    rest = text.slice(start);
  });
  if (rest.trim() !== "") (JSON.parse(rest), count++);
  return count;
}

async function reader() {
  const reading = createRecordingReader({ file, format: "auto" });
  let count = 0;
  await eachPiece((piece) => (count += reading.push(piece).length));
  count += reading.end().length;
  const errors = reading.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(`the trace does not read cleanly: ${errors[0].code} ${errors[0].message}`);
  return count;
}

async function measure(name, run) {
  global.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const start = performance.now();
  const count = await run();
  const seconds = (performance.now() - start) / 1000;
  if (count !== events) throw new Error(`${name} read ${count} events, not ${events}`);
  return {
    reading: name,
    events: count,
    seconds: Number(seconds.toFixed(2)),
    "events/s": Math.round(count / seconds),
    "MB/s": Number((megabytes / seconds).toFixed(1)),
    "heap growth MB": Number(((process.memoryUsage().heapUsed - heapBefore) / 2 ** 20).toFixed(1)),
  };
}

try {
  // The machine is shared and noisy: each round measures the floor beside the reader, and the
  // figures are the medians of three rounds, with each round's ratio.
  console.log(`${events.toLocaleString("en")} canonical events, ${megabytes.toFixed(0)} MB, read in 64 KiB pieces (medians of 3 rounds)`);
  const rounds = [];
  for (let i = 0; i < 3; i++) rounds.push([await measure("floor: split lines + JSON.parse", floor), await measure("createRecordingReader (canonical jsonl)", reader)]);
  const median = (results) => [...results].sort((a, b) => a.seconds - b.seconds)[1];
  console.table([median(rounds.map((round) => round[0])), median(rounds.map((round) => round[1]))]);
  const ratios = rounds.map(([floorRound, readerRound]) => readerRound.seconds / floorRound.seconds);
  console.log(`reader time / floor time: ${[...ratios].sort((a, b) => a - b)[1].toFixed(2)} (rounds: ${ratios.map((ratio) => ratio.toFixed(2)).join(", ")})`);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
