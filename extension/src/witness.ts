import * as vscode from "vscode";
import type { WitnessLocation } from "./protocol.js";

/**
 * `vigil.openWitness`: opens a trace file at a witness event's line. The server's code lenses
 * invoke it with `{ uri, line }` (line from 0); it also takes the two as separate arguments.
 */
export function registerOpenWitness(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand("vigil.openWitness", async (first: unknown, second: unknown) => {
      const location = witnessLocation(first, second);
      if (location === undefined) {
        void vscode.window.showErrorMessage("Vigil: vigil.openWitness needs { uri, line } (a trace file's URI and a line from 0)");
        return;
      }
      await openWitness(location);
    }),
  );
}

function witnessLocation(first: unknown, second: unknown): WitnessLocation | undefined {
  if (typeof first === "string" && typeof second === "number") return { uri: first, line: second };
  if (typeof first !== "object" || first === null) return undefined;
  const { uri, line } = first as { uri?: unknown; line?: unknown };
  if (typeof uri !== "string" || typeof line !== "number" || !Number.isInteger(line) || line < 0) return undefined;
  return { uri, line };
}

/** Opens the file and selects the witness's line, scrolled into the middle of the editor. */
export async function openWitness(location: WitnessLocation): Promise<vscode.TextEditor> {
  const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(location.uri, true));
  const line = document.lineAt(Math.min(location.line, document.lineCount - 1));
  const editor = await vscode.window.showTextDocument(document, { preview: true, selection: line.range });
  editor.revealRange(line.range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  return editor;
}
