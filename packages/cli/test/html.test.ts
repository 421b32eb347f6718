import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TraceEvent } from "@vigil/trace";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeHtml, toHtml } from "../src/reports/html.js";
import { TIMELINE_WHOLE_UP_TO, TIMELINE_WITNESSES_PER_RULE, timelineOf, type RunOutcome, type TimelineEntry, type TimelineEvent } from "../src/reports/outcome.js";
import { cases } from "../../../test/support/tier.js";
import { examples, fixtures } from "./support/paths.js";
import { runCli } from "./support/run-cli.js";

/**
 * The HTML report (`vigilc check --html`) as text: what it contains, what it leaves out of a long
 * run, and that nothing from a trace reaches the page as markup. `html-browser.test.ts` opens the
 * same reports in a real browser.
 */

function events(count: number): TraceEvent[] {
  return Array.from({ length: count }, (_, i) => ({ position: i + 1, action: `tool${i % 7}`, args: { n: i }, status: "ok" as const }));
}

/** The timeline of a whole run with the witnesses of one rule (or of several). */
const timeline = (list: readonly TraceEvent[], witnesses: readonly number[] | readonly (readonly number[])[]) =>
  timelineOf(list.length, (position) => list[position - 1], witnesses.length > 0 && Array.isArray(witnesses[0]) ? (witnesses as number[][]) : [witnesses as number[]]);

const shownPositions = (entries: readonly TimelineEntry[]) =>
  entries.filter((e): e is TimelineEvent => "position" in e).map((e) => e.position);

const tempFile = async (name: string) => join(await mkdtemp(join(tmpdir(), "vigil-html-")), name);

describe("timelines", () => {
  it(`shows a run of up to ${TIMELINE_WHOLE_UP_TO} events whole`, () => {
    expect(shownPositions(timeline(events(TIMELINE_WHOLE_UP_TO), [3]))).toEqual(Array.from({ length: TIMELINE_WHOLE_UP_TO }, (_, i) => i + 1));
  });

  it("keeps the start, the end and each witness with three neighbours of a longer run, and counts what it leaves out", () => {
    const entries = timeline(events(1000), [500]);
    expect(entries.filter((e) => "hidden" in e)).toEqual([{ hidden: 486 }, { hidden: 492 }]);
    expect(shownPositions(entries)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 497, 498, 499, 500, 501, 502, 503, 996, 997, 998, 999, 1000]);
  });

  it("never leaves out a witness, and accounts for every event", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2000 }), fc.array(fc.nat(), { maxLength: 20 }), (count, raw) => {
        const witnesses = raw.map((w) => (w % count) + 1);
        const entries = timeline(events(count), witnesses);
        const shown = shownPositions(entries);
        const hidden = entries.reduce((sum, e) => sum + ("hidden" in e ? e.hidden : 0), 0);
        expect(shown.length + hidden).toBe(count);
        for (const w of witnesses) expect(shown).toContain(w);
        // Positions ascend, and a gap never follows a gap.
        expect([...shown].sort((a, b) => a - b)).toEqual(shown);
        for (let i = 1; i < entries.length; i++) expect("hidden" in entries[i]! && "hidden" in entries[i - 1]!).toBe(false);
      }),
      { numRuns: cases(100, 300) },
    );
  });

  it(`shows the first ${TIMELINE_WITNESSES_PER_RULE} witnesses of each rule of a long run, and counts the witnesses it leaves out`, () => {
    const witnesses = Array.from({ length: 5000 }, (_, i) => 100 + i * 150);
    const entries = timeline(events(1_000_000), [witnesses]);
    const shown = shownPositions(entries);
    for (const w of witnesses.slice(0, TIMELINE_WITNESSES_PER_RULE)) expect(shown).toContain(w);
    expect(shown.length).toBeLessThan(10 + 5 + 7 * TIMELINE_WITNESSES_PER_RULE + 1);
    const hiddenWitnesses = entries.reduce((sum, e) => sum + ("hidden" in e ? (e.witnesses ?? 0) : 0), 0);
    expect(hiddenWitnesses).toBe(witnesses.length - TIMELINE_WITNESSES_PER_RULE);
  });

  it("shortens long values and outputs, saying how long they were", () => {
    const [event] = timeline([{ position: 1, action: "write", args: { content: "x".repeat(5000) }, output: "y".repeat(1000), status: "ok" }], []);
    expect((event as TimelineEvent).args[0]![1]).toMatch(/^x{160}… \(5000 characters\)$/);
    expect((event as TimelineEvent).output).toMatch(/^y{240}… \(1000 characters\)$/);
  });
});

describe("escaping", () => {
  it("escapes the five characters that are markup", () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe("&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  });

  it("puts nothing from a trace or a policy on the page as markup", () => {
    const payload = `"><img src=x onerror=alert(1)></script><script>alert(2)</script>`;
    const outcome: RunOutcome = {
      file: `runs/${payload}.jsonl`,
      format: payload,
      events: 1,
      verdict: "unsafe",
      statements: [{ policy: "p", name: "r", doc: payload, holds: false, response: "ask", remediation: payload, witnesses: [1], witnessLines: [1] }],
      errors: [payload],
      timeline: [{ position: 1, action: payload, status: "ok", args: [[payload, payload]], output: payload, callId: payload, line: 1 }],
    };
    const html = toHtml([outcome], { policyFile: payload, rules: [{ id: "p.r", doc: payload, source: payload }], version: "0", generatedAt: payload });
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
  });
});

describe("responses", () => {
  const outcome = (holds: boolean): RunOutcome => ({
    file: "run.jsonl",
    events: 1,
    verdict: holds ? "safe" : "unsafe",
    statements: [
      { policy: "p", name: "r", holds, response: "warn", remediation: "Move it to the trash.", witnesses: holds ? [] : [1], witnessLines: holds ? [] : [1] },
      { policy: "p", name: "s", holds: true, response: "block", witnesses: [], witnessLines: [] },
    ],
    errors: [],
    timeline: [{ position: 1, action: "rm", status: "ok", args: [] }],
  });
  const page = (outcomes: RunOutcome[]) =>
    toHtml(outcomes, {
      policyFile: "p.vigil",
      rules: [
        { id: "p.r", source: "rule r: abs(action in {rm}) warn" },
        { id: "p.s", source: "rule s: abs(action in {dd})" },
      ],
      version: "0",
      generatedAt: "now",
    });

  it("shows each rule's response and remediation beside it, and beside a witness", () => {
    const html = page([outcome(false)]);
    const row = (id: string) => new RegExp(`<tr id="rule-${id.replace(".", "_2e")}"[^]*?</tr>`).exec(html)?.[0] ?? "";
    expect(row("p.r")).toContain(`response <span class="response-word warn">warn</span> <span class="remediation">Move it to the trash.</span>`);
    expect(row("p.s")).toContain(`<span class="response-word block">block</span></p>`);
    const witness = /<li class="event witness" id="r1e1">(.*?)<\/li>/s.exec(html)?.[1] ?? "";
    expect(witness).toContain("Move it to the trash.");
  });

  it("takes a rule's response from the report when no run violates it", () => {
    expect(page([outcome(true)])).toContain(`<span class="remediation">Move it to the trash.</span>`);
  });
});

describe("vigilc check --html", () => {
  it("writes one self-contained page for one trace, the witness beside its rule's text", async () => {
    const out = await tempFile("report.html");
    const result = await runCli(["check", "dashcam.vigil", "--trace", "violating.jsonl", "--html", out], { cwd: join(examples, "dashcam") });
    expect(result.code).toBe(1);
    const html = await readFile(out, "utf8");
    expect(html.startsWith("<!doctype html>")).toBe(true);
    // Self-contained: nothing is loaded from anywhere, and the page says so to the browser.
    expect(html).toContain(`http-equiv="Content-Security-Policy" content="default-src 'none';`);
    expect(html).not.toMatch(/\b(src|href)="(https?:)?\/\//);
    // Event 5 is the witness of dashcam.R3, and its note carries the rule's documentation and text.
    const witness = /<li class="event witness" id="r1e5">(.*?)<\/li>/s.exec(html)?.[1];
    expect(witness).toBeDefined();
    expect(witness).toContain(`violates <a href="#rule-dashcam_2eR3">dashcam.R3</a>`);
    expect(witness).toContain("rule R3:");
    expect(html.match(/class="event witness"/g)).toHaveLength(1);
    expect(html.match(/<li class="event/g)).toHaveLength(8);
  });

  it("writes a page for a corpus, with a timeline per run, and keeps timelines out of the JSON", async () => {
    const out = await tempFile("corpus.html");
    // A corpus: its runs are judged in worker threads, which the built CLI has.
    const result = await runCli(["check", "no-delete.vigil", "--trace", "corpus", "--html", out, "--format", "json"], { cwd: fixtures, built: true });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { runs: Record<string, unknown>[] };
    for (const run of report.runs) expect(run).not.toHaveProperty("timeline");
    const html = await readFile(out, "utf8");
    expect(html.match(/<article class="run"/g)).toHaveLength(3);
    expect(html.match(/<article class="run" [^>]*data-verdict="safe"/g)).toHaveLength(1);
    expect(html.match(/<article class="run" [^>]*data-verdict="unsafe"/g)).toHaveLength(2);
  });

  it("lists a run it could not check with the reason", async () => {
    const out = await tempFile("bad.html");
    const result = await runCli(["check", "no-delete.vigil", "--trace", "corpus-bad", "--html", out], { cwd: fixtures, built: true });
    expect(result.code).toBe(2);
    const html = await readFile(out, "utf8");
    expect(html).toMatch(/<article class="run" [^>]*data-verdict="failed"/);
    expect(html).toMatch(/<p class="error">corpus-bad\/truncated\.jsonl:1: T0001 /);
  });

  it("a report it cannot write is an input error, after the verdict", async () => {
    const result = await runCli(["check", "no-delete.vigil", "--trace", "ok.jsonl", "--html", "/nonexistent-dir/report.html"], { cwd: fixtures });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("cannot write the HTML report `/nonexistent-dir/report.html`");
  });
});
