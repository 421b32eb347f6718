import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseTestFile } from "@vigil/syntax";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expectGolden, goldenInputs, renderDiagnostics } from "../../../test/support/golden.js";
import { cases } from "../../../test/support/tier.js";

/**
 * Test files (`*.vigiltest`): for each `golden-tests/*.vigiltest`, the diagnostics and the tree the
 * reader builds, in `golden-tests/*.golden`; and the reader never throws, whatever the text.
 */
const directory = join(import.meta.dirname, "golden-tests");

/** The tree as JSON with spans written `line:column-line:column`, so a golden file stays readable. */
function dump(value: unknown): string {
  return JSON.stringify(
    value,
    (key, v: unknown) => {
      if (key === "diagnostics") return undefined;
      if (v !== null && typeof v === "object" && "start" in v && "endColumn" in v) {
        const span = v as { line: number; column: number; endLine: number; endColumn: number };
        return `${span.line}:${span.column}-${span.endLine}:${span.endColumn}`;
      }
      return v;
    },
    2,
  );
}

describe.each(goldenInputs(directory, ".vigiltest"))("%s", (input) => {
  it("reads to the recorded diagnostics and tree", () => {
    const parsed = parseTestFile(readFileSync(join(directory, input), "utf8"));
    expectGolden(directory, input, ".vigiltest", ["# diagnostics", renderDiagnostics(parsed.diagnostics).trimEnd(), "# tree", dump(parsed)].join("\n") + "\n");
  });
});

describe("the test-file reader", () => {
  it("never throws, and every diagnostic it gives has a code and a span inside the text", () => {
    const words = ["policy", "test", "events", "ground", "trace", "messages", "expect", "holds", "hold", "violated", "at", "broken", "by", "decide", "allow", "block", "ask", "warn", "all", "others", "ok", "error", "pending", "output", "{", "}", "[", "]", ",", ":", ".", '"s"', '"', "1", "-2.5e3", "01", "x", "///d\n", "//c\n", "\n", " ", "#", "\\", "\u202e"];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...words), { maxLength: 60 }), (tokens) => {
        const text = tokens.join(" ");
        const parsed = parseTestFile(text);
        for (const d of parsed.diagnostics) {
          expect(d.code).toMatch(/^V200[1-5]$/);
          expect(d.span!.start).toBeGreaterThanOrEqual(0);
          expect(d.span!.end).toBeLessThanOrEqual(text.length);
        }
      }),
      { numRuns: cases(200, 2000) },
    );
  });

  it("keeps integers beyond 2^53 as written, so the trace reader reports them instead of rounding", () => {
    const parsed = parseTestFile('policy "p.vigil"\ntest "t" { events { a {n: 9007199254740993} } expect all hold }');
    const input = parsed.tests[0]!.input!;
    expect(input.kind === "events" && input.events[0]!.argsJson).toBe('{"n":9007199254740993}');
  });
});
