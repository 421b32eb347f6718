import { closeSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchDirectory, vigilcSpawned } from "./support.js";

/**
 * A million events through `check` (20 rules), `--format json`, `signature` and `--html`: each run
 * finishes, gives the right verdicts, and stays within a memory bound measured on the child
 * process (its peak resident set size). Two layouts of the same run: compact records (44 MiB,
 * under the 64 MiB up to which `check` reads a trace whole) and records with more fields (87 MiB,
 * over it, so streamed).
 */

const EVENTS = 1_000_000;
const MEMORY_BOUND_MB = 600;
const HTML_BOUND_BYTES = 20 * 2 ** 20;

/** The actions in turn; event 500,001 is a `delete` in place of a `read`. */
const actions = ["read", "write", "send", "fetch", "list", "exec", "copy", "stat"];
const DELETE_AT = 500_001;

/**
 * Five rules whose outcome on this run is known, written four times (r0 … r19):
 * - abs(delete): violated at event 500,001 only;
 * - prec(send, read): holds (event 1 is a read);
 * - always not (send and once fetch): every send after the first fetch (event 4), 124,999 of them;
 * - resp(write, copy): holds (each write has a copy five events later);
 * - prec(write to $p, read of $p): every write, 125,000 of them (a path is written and read on
 *   events of different residues modulo 8, since 5,000 is a multiple of 8, so never both).
 */
const ruleGroup = [
  "abs(action in {delete})",
  "prec(action in {send}, action in {read})",
  "always not (action in {send} and once action in {fetch})",
  "resp(action in {write}, action in {copy})",
  "prec(action in {write} and path = $p, action in {read} and path = $p)",
];
const expectedWitnessCounts = [1, 0, 124_999, 0, 125_000];
const policyText = `policy big {\n${Array.from({ length: 20 }, (_, i) => `  rule r${i}: ${ruleGroup[i % 5]}\n`).join("")}}\n`;

/** Writes the run in the given layout, ten thousand records at a time. */
function writeRun(file: string, layout: "compact" | "full"): void {
  const fd = openSync(file, "w");
  try {
    let lines: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const action = i + 1 === DELETE_AT ? "delete" : actions[i % 8]!;
      const path = `f${i % 5_000}.txt`;
      lines.push(layout === "compact" ? `{"action":"${action}","args":{"path":"${path}"}}` : `{"action":"${action}","args":{"path":"${path}","cwd":"/home/dev/project","n":${i % 100}},"status":"ok"}`);
      if (lines.length === 10_000) {
        writeSync(fd, lines.join("\n") + "\n");
        lines = [];
      }
    }
  } finally {
    closeSync(fd);
  }
}

const scratch = scratchDirectory("million");
const policy = scratch.file("big.vigil", policyText);
const traces = { compact: `${scratch.path}/compact.jsonl`, full: `${scratch.path}/full.jsonl` };
/** Peak memory of each run, printed at the end for the record. */
const measured: string[] = [];

beforeAll(() => {
  writeRun(traces.compact, "compact");
  writeRun(traces.full, "full");
}, 120_000);

afterAll(() => {
  console.info(`peak memory with ${EVENTS} events:\n  ${measured.join("\n  ")}`);
  scratch.remove();
});

describe.each(["compact", "full"] as const)("1,000,000 events, %s records", (layout) => {
  const size = () => `${Math.round(statSync(traces[layout]).size / 2 ** 20)} MiB`;

  it(`check with 20 rules finishes within ${MEMORY_BOUND_MB} MB and reports the right verdicts`, async () => {
    const run = await vigilcSpawned(["check", policy, "--trace", traces[layout]], { cwd: scratch.path, timeoutMs: 170_000, measureMemory: true });
    measured.push(`check, ${layout} (${size()}): ${run.maxRssMb?.toFixed(0)} MB`);
    expect(run.signal).toBeNull();
    expect(run.code).toBe(1);
    // The closing summary, and the lone delete among the witnesses (the report is large: quote only these).
    const summary = run.stdout.trimEnd().split("\n").slice(-3);
    expect(summary[0]).toMatch(new RegExp(`^checked 20 rules of \\S*big\\.vigil against ${EVENTS} events of`));
    expect(summary[1]).toMatch(/^ {2}8 hold, 12 violated/);
    expect(summary[2]).toBe("verdict: unsafe");
    expect(run.stdout.includes(`witness event ${DELETE_AT} (`), `the report shows witness event ${DELETE_AT}`).toBe(true);
    expect(run.maxRssMb).toBeDefined();
    expect(run.maxRssMb!).toBeLessThan(MEMORY_BOUND_MB);
  }, 180_000);

  it(`check --format json finishes within ${MEMORY_BOUND_MB} MB with every witness`, async () => {
    const run = await vigilcSpawned(["check", policy, "--trace", traces[layout], "--format", "json"], { cwd: scratch.path, timeoutMs: 170_000, measureMemory: true });
    measured.push(`check --format json, ${layout} (${size()}): ${run.maxRssMb?.toFixed(0)} MB`);
    expect(run.signal).toBeNull();
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as { verdict: string; statements: Array<{ name: string; holds: boolean; witnesses: number[] }> };
    expect(report.verdict).toBe("unsafe");
    expect(report.statements).toHaveLength(20);
    report.statements.forEach((statement, i) => {
      expect(statement.witnesses.length, statement.name).toBe(expectedWitnessCounts[i % 5]);
      expect(statement.holds, statement.name).toBe(expectedWitnessCounts[i % 5] === 0);
    });
    expect(report.statements[0]!.witnesses).toEqual([DELETE_AT]);
    expect(run.maxRssMb).toBeDefined();
    expect(run.maxRssMb!).toBeLessThan(MEMORY_BOUND_MB);
  }, 180_000);
});

describe("1,000,000 events through signature and --html", () => {
  it("signature finishes and counts every event and action", async () => {
    const run = await vigilcSpawned(["signature", traces.compact, "--format", "json"], { cwd: scratch.path, timeoutMs: 170_000, measureMemory: true });
    measured.push(`signature --format json, compact: ${run.maxRssMb?.toFixed(0)} MB`);
    expect(run.signal).toBeNull();
    expect(run.code).toBe(0);
    const signature = JSON.parse(run.stdout) as { events: number; actions: string[]; keys: Array<{ key: string; distinctValues: number }> };
    expect(signature.events).toBe(EVENTS);
    expect([...signature.actions].sort()).toEqual([...actions, "delete"].sort());
    expect(signature.keys.find((k) => k.key === "path")?.distinctValues).toBe(5_000);
  }, 180_000);

  it("check --html writes a page under 20 MB that shows the lone delete", async () => {
    const page = `${scratch.path}/report.html`;
    const run = await vigilcSpawned(["check", policy, "--trace", traces.compact, "--html", page], { cwd: scratch.path, timeoutMs: 170_000, measureMemory: true });
    measured.push(`check --html, compact: ${run.maxRssMb?.toFixed(0)} MB`);
    expect(run.signal).toBeNull();
    expect(run.stderr).not.toContain("cannot write the HTML report");
    expect(run.code).toBe(1);
    const bytes = statSync(page).size;
    measured.push(`HTML page: ${(bytes / 2 ** 20).toFixed(2)} MiB`);
    expect(bytes).toBeLessThan(HTML_BOUND_BYTES);
    const html = readFileSync(page, "utf8");
    expect(html).toMatch(/500,?001/);
    expect(html).toContain("delete");
  }, 180_000);
});
