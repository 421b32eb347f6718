import { relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { diagnosticCodes, type Diagnostic } from "@vigil/diagnostics";
import type * as Sarif from "sarif";
import { ruleId } from "@vigil/compiler";
import { neverTriggered, type RunOutcome } from "./outcome.js";

/**
 * SARIF 2.1.0 for code-scanning interfaces: one `rule` per Vigil statement (its `///` text as the
 * description, its remediation as the help), one `result` per violated statement and run, located
 * at the trace lines of its witnesses; a run that could not be checked is a `notification` of the
 * tool's execution. A rule's response sets the level: a violation that blocks is an `error`, one
 * that warns or asks a person is a `warning`, and the `response` property says which. A run of a
 * file holding several is located in that file, at its own lines; its messages start with its name
 * (`[task 3 trial 1]`) and its `run` property names it.
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
    const prefix = outcome.run !== undefined ? `[${outcome.run}] ` : "";
    const run = outcome.run !== undefined ? { run: outcome.run } : {};
    for (const error of outcome.errors) {
      notifications.push({
        level: error.severity === "info" ? "note" : error.severity,
        message: { text: `${prefix}${error.message}` },
        ...(outcome.run !== undefined ? { properties: run } : {}),
        descriptor: { id: error.code },
        locations: [
          {
            physicalLocation: {
              artifactLocation: { uri: uri(error.file) },
              ...(error.line !== undefined ? { region: { startLine: error.line, ...(error.column !== undefined ? { startColumn: error.column } : {}) } } : {}),
            },
          },
        ],
      });
    }
    for (const statement of outcome.statements) {
      const id = ruleId(statement);
      const level = levelOf(statement.response);
      const remediation = statement.remediation !== undefined ? { remediation: statement.remediation } : {};
      if (!rules.has(id)) {
        rules.set(id, {
          id,
          shortDescription: { text: statement.doc ?? id },
          ...(statement.remediation !== undefined ? { help: { text: statement.remediation } } : {}),
          defaultConfiguration: { level },
          properties: { policyFile: options.policyFile, response: statement.response, ...remediation },
        });
      }
      if (statement.holds) continue;
      const lines = statement.witnessLines.length > 0 ? statement.witnessLines : [1];
      const verdict =
        statement.undecided !== undefined
          ? `${id} could not be decided (${statement.undecided}); the run counts as unsafe`
          : `${id} is violated at event${statement.witnesses.length === 1 ? "" : "s"} ${statement.witnesses.join(", ")}${statement.doc ? `: ${statement.doc}` : ""}`;
      const advice = statement.remediation !== undefined ? ` Remediation: ${statement.remediation}` : "";
      const stop = /[.!?]$/.test(verdict) ? "" : ".";
      results.push({
        ruleId: id,
        level,
        message: { text: `${prefix}${verdict}${stop} Response: ${statement.response}.${advice}` },
        locations: lines.map((line) => ({ physicalLocation: { artifactLocation: { uri: uri(outcome.file) }, region: { startLine: line } } })),
        properties: { ...run, witnesses: statement.witnesses, response: statement.response, ...remediation },
      });
    }
  }
  // A rule that held only vacuously everywhere is a problem of the policy (its configuration): said so.
  const configuration: Sarif.Notification[] = neverTriggered(outcomes).map((rule) => ({
    level: "warning",
    message: { text: `the trigger of ${rule} matched no event in any run: it held only vacuously (a pattern that can never match looks like this)` },
    descriptor: { id: "never-triggered" },
    associatedRule: { id: rule },
  }));
  return {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: { driver: { name: "vigilc", version: options.version, rules: [...rules.values()] } },
        results,
        invocations: [{ executionSuccessful: notifications.length === 0, toolExecutionNotifications: notifications, ...(configuration.length > 0 ? { toolConfigurationNotifications: configuration } : {}) }],
      },
    ],
  };
}

/** A violation that refuses the call (and, with `halt` or `quarantine`, contains the run) is an error; one that lets it through or asks a person is a warning. */
function levelOf(response: RunOutcome["statements"][number]["response"]): Sarif.ReportingConfiguration["level"] & Sarif.Result["level"] {
  return response === "block" || response === "halt" || response === "quarantine" ? "error" : "warning";
}

/**
 * SARIF 2.1.0 of diagnostics about policy files (`vigilc analyze`): one `rule` per diagnostic code
 * (its summary as the description), one `result` per diagnostic at its place in the policy file.
 */
export function diagnosticsToSarif(files: readonly { readonly file: string; readonly diagnostics: readonly Diagnostic[] }[], options: { cwd: string; version: string }): Sarif.Log {
  const rules = new Map<string, Sarif.ReportingDescriptor>();
  const results: Sarif.Result[] = [];
  for (const { file, diagnostics } of files) {
    for (const d of diagnostics) {
      if (!rules.has(d.code)) rules.set(d.code, { id: d.code, shortDescription: { text: diagnosticCodes[d.code].summary } });
      const path = relative(options.cwd, resolve(options.cwd, d.file ?? file));
      const uri = path.startsWith("..") ? pathToFileURL(resolve(options.cwd, d.file ?? file)).href : path.split("\\").join("/");
      results.push({
        ruleId: d.code,
        level: d.severity === "info" ? "note" : d.severity,
        message: { text: d.help !== undefined ? `${d.message}. ${d.help}.` : d.message },
        locations: [
          {
            physicalLocation: {
              artifactLocation: { uri },
              ...(d.span !== undefined ? { region: { startLine: d.span.line, startColumn: d.span.column, endLine: d.span.endLine, endColumn: d.span.endColumn } } : {}),
            },
          },
        ],
      });
    }
  }
  return {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [{ tool: { driver: { name: "vigilc", version: options.version, rules: [...rules.values()] } }, results }],
  };
}
