import * as vscode from "vscode";
import type { Middleware } from "vscode-languageclient/node";
import { runTestCommand, type RunTestResult } from "./protocol.js";
import { messageOf, testRunSummary } from "./report.js";

/**
 * `vigil.runTest` is the server's command: the language client registers it, and the test lenses
 * invoke it with the test to run. Run from the command palette it has no argument; it then runs
 * every test of the active test file (saved or not) and sums up the outcome in a notification.
 */
export const runTestMiddleware: Pick<Middleware, "executeCommand"> = {
  executeCommand: async (command, args, next) => {
    if (command !== runTestCommand || args.length > 0) return next(command, args);
    const document = vscode.window.activeTextEditor?.document;
    if (document?.languageId !== "vigil-test") {
      void vscode.window.showErrorMessage("Vigil: open a .vigiltest file, then run its tests");
      return undefined;
    }
    let result: RunTestResult | undefined;
    try {
      result = (await next(command, [{ uri: document.uri.toString() }])) as RunTestResult | undefined;
    } catch (error) {
      void vscode.window.showErrorMessage(`Vigil: the tests could not be run: ${messageOf(error)}`);
      return undefined;
    }
    if (result === undefined || result === null) return result;
    const summary = testRunSummary(result);
    if (result.tests.length > 0 && result.tests.every((test) => test.outcome === "passed")) void vscode.window.showInformationMessage(`Vigil: ${summary}`);
    else void vscode.window.showWarningMessage(`Vigil: ${summary}`);
    return result;
  },
};
