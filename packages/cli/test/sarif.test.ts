import { describe, expect, it } from "vitest";
import type { RunOutcome, StatementResult } from "../src/reports/outcome.js";
import { toSarif } from "../src/reports/sarif.js";

/** The SARIF log in-process: what a rule's response makes of its results (the CLI test covers the file). */
const statement = (name: string, response: StatementResult["response"], remediation?: string): StatementResult => ({
  policy: "p",
  name,
  doc: `Rule ${name}.`,
  holds: false,
  response,
  ...(remediation !== undefined ? { remediation } : {}),
  witnesses: [2],
  witnessLines: [3],
});

const outcome: RunOutcome = {
  file: "run.jsonl",
  events: 4,
  verdict: "unsafe",
  statements: [statement("blocks", "block", "Validate first."), statement("warns", "warn"), statement("asks", "ask", "Ask before deleting.")],
  errors: [],
};

describe("toSarif", () => {
  const log = toSarif([outcome], { policyFile: "p.vigil", cwd: "/work", version: "0" });
  const run = log.runs[0]!;

  it("makes a blocking violation an error, and one that warns or asks a warning, saying which", () => {
    expect(run.results!.map((r) => [r.ruleId, r.level, r.properties?.["response"]])).toEqual([
      ["p.blocks", "error", "block"],
      ["p.warns", "warning", "warn"],
      ["p.asks", "warning", "ask"],
    ]);
    expect(run.tool.driver.rules!.map((r) => r.defaultConfiguration?.level)).toEqual(["error", "warning", "warning"]);
  });

  it("puts the remediation in the message, the properties and the rule's help", () => {
    const [blocks, warns, asks] = run.results!;
    expect(blocks!.message.text).toBe("p.blocks is violated at event 2: Rule blocks. Response: block. Remediation: Validate first.");
    expect(blocks!.properties).toEqual({ witnesses: [2], response: "block", remediation: "Validate first." });
    expect(warns!.message.text).toBe("p.warns is violated at event 2: Rule warns. Response: warn.");
    expect(warns!.properties).not.toHaveProperty("remediation");
    expect(asks!.message.text).toContain("Remediation: Ask before deleting.");
    expect(run.tool.driver.rules![0]!.help).toEqual({ text: "Validate first." });
    expect(run.tool.driver.rules![1]!).not.toHaveProperty("help");
  });
});
