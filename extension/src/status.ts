import * as vscode from "vscode";
import type { StatusParams } from "./protocol.js";

/**
 * The status-bar item that shows what the server says about the workspace (`vigil/status`: how
 * many sample traces it checks against, or that there is no vigil.config.json). It is shown while
 * a Vigil document is the active editor; a click opens the server's log.
 */
export class ServerStatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("vigil.status", vscode.StatusBarAlignment.Right, 100);
  private readonly subscriptions: vscode.Disposable[] = [];
  private received = false;

  constructor(private readonly serverLog: vscode.LogOutputChannel) {
    this.item.name = "Vigil";
    this.item.text = "$(loading~spin) Vigil";
    this.item.tooltip = "The Vigil language server is starting";
    this.item.command = "vigil.showServerLog";
    this.subscriptions.push(
      vscode.commands.registerCommand("vigil.showServerLog", () => this.serverLog.show(true)),
      vscode.window.onDidChangeActiveTextEditor(() => this.updateVisibility()),
    );
    this.updateVisibility();
  }

  show(params: StatusParams): void {
    this.received = true;
    const icon = params.severity === "error" ? "$(error)" : params.severity === "warning" ? "$(warning)" : "$(shield)";
    this.item.text = `${icon} ${params.text}`;
    this.item.tooltip = params.tooltip ?? params.text;
    this.item.backgroundColor =
      params.severity === "error"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : params.severity === "warning"
          ? new vscode.ThemeColor("statusBarItem.warningBackground")
          : undefined;
    this.updateVisibility();
  }

  /** Whether the server has sent a status yet. */
  get hasStatus(): boolean {
    return this.received;
  }

  private updateVisibility(): void {
    if (vscode.window.activeTextEditor?.document.languageId === "vigil") this.item.show();
    else this.item.hide();
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    this.item.dispose();
  }
}
