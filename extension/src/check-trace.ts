import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { activePolicyDocument } from "./policy-document.js";
import { checkTraceRequest, type CheckTraceParams, type CheckTraceResult, type Engine, type ProtocolRange } from "./protocol.js";
import { baseName, describeWitness, failedStatements, messageOf, reportLines, summaryLine, violationMessage } from "./report.js";

/**
 * "Vigil: Check against trace…": judges the policy on one trace file with the server
 * (`vigil/checkTrace`), puts each rule that does not hold in the Problems panel (on the rule's name,
 * naming the trace and the witness events, each witness a link to its line in the trace) and writes
 * the full report to the "Vigil" output channel.
 *
 * The trace is the command's argument (the explorer's context menu), else the active editor when it
 * is not a policy, else a file chosen in the open dialog.
 */
export function registerCheckAgainstTrace(context: vscode.ExtensionContext, clientOf: () => LanguageClient, reports: vscode.OutputChannel): void {
  const problems = vscode.languages.createDiagnosticCollection("vigil-trace");
  context.subscriptions.push(
    problems,
    // A verdict is about the text it was computed on: an edit or closing the policy removes it.
    vscode.workspace.onDidChangeTextDocument((event) => {
      if (event.contentChanges.length > 0 && problems.has(event.document.uri)) problems.delete(event.document.uri);
    }),
    vscode.workspace.onDidCloseTextDocument((document) => problems.delete(document.uri)),
    vscode.commands.registerCommand("vigil.checkAgainstTrace", async (argument?: unknown) => {
      const policy = activePolicyDocument();
      if (policy === undefined) {
        void vscode.window.showErrorMessage("Vigil: open the .vigil policy to check, then run the command again");
        return;
      }
      const trace = await chooseTrace(argument, policy);
      if (trace === undefined) return;
      const engine = vscode.workspace.getConfiguration("vigil", policy.uri).get<Engine>("engine", "eval");
      const params: CheckTraceParams = { uri: policy.uri.toString(), trace: trace.fsPath, engine };
      let result: CheckTraceResult;
      try {
        result = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Window, title: `Vigil: checking ${baseName(trace.fsPath)}` },
          () => clientOf().sendRequest<CheckTraceResult>(checkTraceRequest, params),
        );
      } catch (error) {
        void vscode.window.showErrorMessage(`Vigil: ${baseName(trace.fsPath)} could not be checked: ${messageOf(error)}`);
        return;
      }
      problems.set(policy.uri, failedStatements(result).map((statement) => {
        const problem = new vscode.Diagnostic(
          toRange(statement.range),
          violationMessage(statement, result.trace),
          statement.undecided === undefined ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
        );
        problem.source = "vigil";
        problem.code = statement.undecided === undefined ? "violated" : "undecided";
        const traceUri = vscode.Uri.file(result.trace);
        problem.relatedInformation = statement.witnesses
          .filter((witness) => witness.line !== undefined)
          .map((witness) => new vscode.DiagnosticRelatedInformation(new vscode.Location(traceUri, new vscode.Position(witness.line! - 1, 0)), `witness: ${describeWitness(witness)}`));
        return problem;
      }));
      reports.appendLine(reportLines(result, vscode.workspace.asRelativePath(policy.uri), engine).join("\n"));
      reports.appendLine("");
      reports.show(true);
      const summary = summaryLine(result);
      if (result.verdict === "safe" && result.errors.length === 0) void vscode.window.showInformationMessage(summary);
      else void vscode.window.showWarningMessage(summary);
    }),
  );
}

const traceExtensions = ["jsonl", "ndjson", "json", "log"];

async function chooseTrace(argument: unknown, policy: vscode.TextDocument): Promise<vscode.Uri | undefined> {
  if (argument instanceof vscode.Uri && argument.scheme === "file") return argument;
  const active = vscode.window.activeTextEditor?.document;
  if (active !== undefined && active.languageId !== "vigil" && active.uri.scheme === "file") return active.uri;
  const chosen = await vscode.window.showOpenDialog({
    canSelectMany: false,
    canSelectFolders: false,
    openLabel: "Check against this trace",
    title: `Vigil: a trace to check ${baseName(policy.uri.path)} against`,
    defaultUri: vscode.Uri.joinPath(policy.uri, ".."),
    filters: { Traces: traceExtensions, "All files": ["*"] },
  });
  return chosen?.[0];
}

function toRange(range: ProtocolRange): vscode.Range {
  return new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
}
