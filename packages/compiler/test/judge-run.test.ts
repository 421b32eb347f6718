import { mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile, judgeRun, readEventsAt, readRecording } from "@vigil/compiler";
import { describe, expect, it } from "vitest";

/**
 * The one pipeline: a file streamed piece by piece gives exactly what its whole text gives, and the
 * witness events and lines a report needs are found whether they were final while reading (`abs`,
 * an `until` trigger) or only at the end (`resp`).
 */
const policy = compile(
  [
    "policy p {",
    '  rule no_rm: abs(action in {rm} and path ~ "/etc/*")',
    "  rule closes: resp(action in {open} and id = $f, action in {close} and id = $f)",
    "  rule locked: until(action in {lock} and id = $l, action in {unlock} and id = $l, action in {write} and id = $l)",
    "}",
    "",
  ].join("\n"),
);
const directory = mkdtempSync(join(tmpdir(), "vigil-judge-"));
const file = join(directory, "run.jsonl");
const actions = ["rm", "open", "close", "lock", "unlock", "write", "ls"];
const paths = ["/etc/passwd", "/tmp/x"];
writeFileSync(
  file,
  Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ action: actions[(i * 5) % 7], args: { path: paths[i % 2], id: `f${i % 13}` } })).join("\n") + "\n",
);

describe("judgeRun", () => {
  it("gives the same report for a streamed file and for its text, and locates the witnesses a report shows", async () => {
    const streamed = await judgeRun(policy, { file }, { locateWitnesses: 5, witnessLines: true });
    const whole = await judgeRun(policy, { file, text: readFileSync(file, "utf8") }, { locateWitnesses: 5, witnessLines: true });
    expect(streamed.eventCount).toBe(20_000);
    expect(streamed.events).toBeUndefined();
    expect(streamed.report!.statements.map((s) => [s.name, s.holds, s.witnesses])).toEqual(whole.report!.statements.map((s) => [s.name, s.holds, s.witnesses]));
    for (const statement of streamed.report!.statements) {
      expect(statement.witnesses.length).toBeGreaterThan(5);
      // Read again at the end (from a line the first reading noted) or caught while reading, the
      // events are those of a whole reading, down to their lines and spans.
      for (const position of statement.witnesses.slice(0, 5)) expect(streamed.witnessEvents!.get(position)).toEqual(whole.witnessEvents!.get(position));
      // Canonical events are one per line: the line of a witness is its position.
      for (const position of statement.witnesses) expect(streamed.witnessLines!.get(position)).toBe(position);
    }
  });

  it("stops reading past its time budget and leaves every statement undecided", async () => {
    const judged = await judgeRun(policy, { file }, { budgetMs: 0 });
    expect(judged.eventCount).toBeLessThan(20_000);
    expect(judged.report!.statements.every((s) => !s.holds && s.undecided !== undefined)).toBe(true);
  });

  it("reads again only up to the last event wanted, and gives the events a whole reading gives", async () => {
    const whole = readRecording(readFileSync(file, "utf8"), { file }).trace.events;
    const positions = new Set([1, 2, 4096, 4097, 12_345, 20_000]);
    const found = await readEventsAt(file, { file }, positions);
    expect([...found.keys()].sort((a, b) => a - b)).toEqual([...positions]);
    for (const position of positions) expect(found.get(position)).toEqual(whole[position - 1]);
    // Grounded, positions are not one per line: the run is read as usual and the others dropped.
    const grounded = await readEventsAt(file, { file, ground: true }, positions);
    for (const position of positions) expect(grounded.get(position)).toEqual(whole[position - 1]);
  });
});

/** How many of this process's open files are `path`. */
function openDescriptorsOf(path: string): number {
  let count = 0;
  for (const descriptor of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${descriptor}`) === path) count++;
    } catch {
      // The descriptor was closed while the list was read.
    }
  }
  return count;
}

/** A real signal that its owner aborts at the `at`-th look the run takes at it. */
function abortedAtLook(at: number, reason: Error): { signal: AbortSignal; looks: () => number } {
  const controller = new AbortController();
  const signal = controller.signal;
  const look = signal.throwIfAborted.bind(signal);
  let looks = 0;
  signal.throwIfAborted = () => {
    if (++looks === at) controller.abort(reason);
    look();
  };
  return { signal, looks: () => looks };
}

describe("judgeRun cancelled by a signal", () => {
  it("rejects with the signal's reason before reading anything", async () => {
    const controller = new AbortController();
    const reason = new Error("superseded by a newer edit");
    controller.abort(reason);
    await expect(judgeRun(policy, { file }, { signal: controller.signal })).rejects.toBe(reason);
    expect(openDescriptorsOf(file)).toBe(0);
  });

  it("stops between the pieces of a file and closes it", async () => {
    const reason = new Error("stale");
    const { signal, looks } = abortedAtLook(3, reason);
    await expect(judgeRun(policy, { file }, { signal })).rejects.toBe(reason);
    // Cancelled in the middle: the file is some twenty pieces, and the run stopped at the third
    // look (the fourth is the reading's own, as it tells a cancellation from a failure to read).
    expect(looks()).toBe(4);
    expect(openDescriptorsOf(file)).toBe(0);
    // Nothing is left behind: the same run, not cancelled, is judged as before.
    const judged = await judgeRun(policy, { file });
    expect(judged.eventCount).toBe(20_000);
  });

  it("stops a run given as text every few thousand events", async () => {
    const reason = new Error("stale");
    const { signal, looks } = abortedAtLook(2, reason);
    await expect(judgeRun(policy, { file, text: readFileSync(file, "utf8") }, { signal })).rejects.toBe(reason);
    expect(looks()).toBe(2);
  });
});
