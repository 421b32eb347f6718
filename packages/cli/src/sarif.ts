import { relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type * as Sarif from "sarif";
import type { RunOutcome } from "./outcome.js";

/**
 * SARIF 2.1.0 for code-scanning interfaces: one `rule` per Vigil statement (its `///` text as the
 * description), one `result` per violated statement and run, located at the trace lines of its
 * witnesses; a run that could not be checked is a `notification` of the tool's execution.
 */
export function toSarif(outcomes: readonly RunOutcome[], options: { policyFile: string; cwd: string; version: string }): Sarif.Log {
  const rules = new Map<string, Sarif.ReportingDescriptor>();
  const results: Sarif.Result[] = [];
  const notifications: Sarif.Notification[] = [];
  // Paths inside the working directory stay relative (how code-scanning tools expect them); others become file URIs.
  const uri = (file: string) => {
    const path = relative(options.cwd, resolve(options.cwd, file));
    return path.startsWith("..") ? pathToFileURL(resolve(options.cwd, file)).href : path.split("\\").join("/");
  };
  for (const outcome of outcomes) {
    for (const error of outcome.errors) {
      notifications.push({ level: "error", message: { text: error }, locations: [{ physicalLocation: { artifactLocation: { uri: uri(outcome.file) } } }] });
    }
    for (const statement of outcome.statements) {
      const id = `${statement.policy}.${statement.name}`;
      if (!rules.has(id)) {
        rules.set(id, { id, shortDescription: { text: statement.doc ?? id }, properties: { policyFile: options.policyFile } });
      }
      if (statement.holds) continue;
      const lines = statement.witnessLines.length > 0 ? statement.witnessLines : [1];
      results.push({
        ruleId: id,
        level: "error",
        message: {
          text: statement.undecided !== undefined
            ? `${id} could not be decided (${statement.undecided}); the run counts as unsafe`
            : `${id} is violated at event${statement.witnesses.length === 1 ? "" : "s"} ${statement.witnesses.join(", ")}${statement.doc ? `: ${statement.doc}` : ""}`,
        },
        locations: lines.map((line) => ({ physicalLocation: { artifactLocation: { uri: uri(outcome.file) }, region: { startLine: line } } })),
        properties: { witnesses: statement.witnesses },
      });
    }
  }
  return {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: { driver: { name: "vigilc", version: options.version, rules: [...rules.values()] } },
        results,
        invocations: [{ executionSuccessful: notifications.length === 0, toolExecutionNotifications: notifications }],
      },
    ],
  };
}
