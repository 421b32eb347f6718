import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { root } from "./support/lsp-client.js";

/**
 * The server's analysis worker thread on its own (the built module, whose worker file sits beside
 * it): answers in order, stops at once when a request is aborted and starts afresh for the next,
 * and fails a request that runs past its time limit without failing the ones after it.
 */

const { AnalysisWorker, AnalysisFailed } = (await import(pathToFileURL(resolve(root, "packages/language-server/dist/findings/runner.js")).href)) as typeof import("../src/findings/runner.js");
const text = readFileSync(resolve(root, "packages/cli/test/fixtures/analysis/release.vigil"), "utf8");
const question = { text, depth: 5, timeoutMs: 10_000 };

describe("the analysis worker", () => {
  it("answers requests one at a time, each with its own findings", async () => {
    const worker = new AnalysisWorker();
    try {
      const [release, clean] = await Promise.all([worker.analyze(question), worker.analyze({ ...question, text: "policy p { rule r: prec(action in {b}, action in {a}) }\n" })]);
      expect(new Set(release?.map((d) => d.code))).toEqual(new Set(["A0001", "A0002", "A0003", "A0004", "A0005", "A0006"]));
      expect(clean).toEqual([]);
    } finally {
      await worker.dispose();
    }
  });

  it("stops a request whose signal aborts, skips one aborted before it started, and answers the next", async () => {
    const worker = new AnalysisWorker();
    try {
      const running = new AbortController();
      const skipped = new AbortController();
      skipped.abort();
      const first = worker.analyze(question, running.signal);
      const second = worker.analyze(question, skipped.signal);
      setTimeout(() => running.abort(), 200);
      expect(await first).toBeUndefined();
      expect(await second).toBeUndefined();
      expect((await worker.analyze(question))?.length).toBeGreaterThan(0);
      await expect(worker.analyze({ ...question, text: "policy p {" })).rejects.toThrow("the policy has errors");
    } finally {
      await worker.dispose();
    }
  });

  it("fails a request past its time limit with the reason", async () => {
    const worker = new AnalysisWorker({ timeLimitMs: 300 });
    try {
      const late = worker.analyze(question);
      await expect(late).rejects.toBeInstanceOf(AnalysisFailed);
      await expect(late).rejects.toThrow("the analysis did not finish within 300 ms");
    } finally {
      await worker.dispose();
    }
  });
});
