import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module script without type declarations
import { defaultCorpus, measure, summarize } from "./measure.mjs";
// @ts-expect-error -- a plain ES module script without type declarations
import { mineAndScore } from "./mine.mjs";

/**
 * The AgentDojo policy set against the 1,382 recorded runs in ../shared/data/agentdojo (read in
 * place): every run reads and is judged, and the confusion counts, precision, recall and F1 are
 * exactly those in `measured.json`, the figures the README quotes. A change to a policy, the
 * adapter or the evaluator that moves a figure fails here until `measured.json` is regenerated
 * (`node examples/agentdojo/measure.mjs --json > examples/agentdojo/measured.json`) and the
 * README updated with it.
 */

const recorded = JSON.parse(readFileSync(join(import.meta.dirname, "measured.json"), "utf8"));

describe("the AgentDojo policies on the recorded runs", async () => {
  const { rows, problems } = await measure(defaultCorpus);

  it("judges every run, with no run unread or skipped", () => {
    expect(problems).toEqual([]);
    expect(rows.length).toBe(1382);
  });

  it("reproduces the recorded precision, recall and F1", () => {
    expect(summarize(rows)).toEqual(recorded);
  });

  it("flags every injected run of the suites whose attacks all act through tool calls", () => {
    const missed = rows.filter((row: { positive: boolean; broken: string[]; suite: string }) => row.positive && row.broken.length === 0);
    expect(missed.every((row: { suite: string }) => row.suite === "travel")).toBe(true);
  });
});

describe("vigilc mine on the recorded runs", () => {
  const mined = JSON.parse(readFileSync(join(import.meta.dirname, "mined.json"), "utf8"));

  it("mines rules that hold on every run they were mined from, and reproduces the recorded figures", () => {
    const result = mineAndScore(defaultCorpus);
    expect(result.problems).toEqual([]);
    expect({ good: result.good, goodOverall: result.goodOverall, against: result.against, againstOverall: result.againstOverall }).toEqual(mined);
  });
});
