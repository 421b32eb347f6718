import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { checkSourceFile } from "@vigil/checker";
import { sortDiagnostics } from "@vigil/diagnostics";
import { parse } from "@vigil/syntax";
import { readTrace, signatureOf } from "@vigil/trace";
import { describe, it } from "vitest";
import { expectGolden, goldenInputs, renderDiagnostics } from "../../../test/support/golden.js";

/**
 * Golden checker tests: for each `golden/*.vigil` (checked against the signature of the `.jsonl`
 * trace beside it, when there is one), the diagnostics and the statements that come out checked.
 */
const directory = join(import.meta.dirname, "golden");

describe.each(goldenInputs(directory, ".vigil"))("%s", (input) => {
  it("checks to the recorded diagnostics and statements", () => {
    const text = readFileSync(join(directory, input), "utf8");
    const tracePath = join(directory, input.replace(/\.vigil$/, ".jsonl"));
    const signature = existsSync(tracePath) ? signatureOf(readTrace(readFileSync(tracePath, "utf8")).trace.events) : undefined;
    const parsed = parse(text);
    const checked = checkSourceFile(parsed.file, signature === undefined ? {} : { signature });
    const statements = checked.program.policies.flatMap((policy) =>
      policy.statements.map((s) => {
        const variables = s.variables.length > 0 ? ` ($${s.variables.join(", $")})` : "";
        const remediation = s.remediation !== undefined ? ` ${JSON.stringify(s.remediation)}` : "";
        const readOnly = s.readOnly !== undefined ? " (read_only checked)" : "";
        return `${s.policy}.${s.name}: ${s.form}${variables}${s.scope !== undefined ? ` (${s.scope.kind})` : ""} → ${s.response}${remediation}${readOnly}`;
      }),
    );
    const output = [
      "# diagnostics",
      renderDiagnostics(sortDiagnostics([...parsed.diagnostics, ...checked.diagnostics])).trimEnd(),
      "# checked statements",
      statements.length > 0 ? statements.join("\n") : "(none)",
    ];
    expectGolden(directory, input, ".vigil", output.join("\n") + "\n");
  });
});
