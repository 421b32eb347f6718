import type { Locator, Page } from "playwright-core";
import { expect } from "vitest";

/**
 * What a person does in VS Code, done through the page: the command palette, quick open, go to
 * line, typing. The selectors are VS Code's own CSS classes, which change between releases; they
 * hold for the code-server release pinned in scripts/editor-tools/install.mjs.
 */

/** How long to wait for something the editor does by itself (open a file, show a widget). */
export const uiTimeout = 15_000;
/** How long to wait for something the language server computes (diagnostics, lenses, completions). */
export const serverTimeout = 45_000;

export class Workbench {
  constructor(readonly page: Page) {}

  /** The quick input box (command palette, quick open, go to line). */
  get quickInput(): Locator {
    return this.page.locator(".quick-input-widget input").first();
  }

  /** The active editor: the one with focus in the active editor group. */
  get editor(): Locator {
    return this.page.locator(".editor-group-container.active .editor-instance .monaco-editor").first();
  }

  /** Runs a command of the command palette by its full title ("Format Document", "Vigil: Show signature"). */
  async runCommand(title: string): Promise<void> {
    await this.dismissWidgets();
    await this.page.keyboard.press("F1");
    await this.quickInput.waitFor({ state: "visible", timeout: uiTimeout });
    await this.quickInput.fill(`>${title}`);
    const row = this.page.locator(".quick-input-widget .monaco-list-row", { has: this.page.locator(".label-name", { hasText: exactly(title) }) });
    await row.first().waitFor({ state: "visible", timeout: uiTimeout });
    await row.first().click();
    await this.quickInput.waitFor({ state: "hidden", timeout: uiTimeout }).catch(() => undefined);
  }

  /**
   * Opens a file of the workspace: its tab when it is open already, else the file's row in quick
   * open (searched by its path); then waits for its tab to be the active one.
   */
  async openFile(relativePath: string): Promise<void> {
    const name = relativePath.slice(relativePath.lastIndexOf("/") + 1);
    await this.dismissWidgets();
    const tab = this.page.locator(`.tabs-container .tab[data-resource-name="${name}"]`);
    if ((await tab.count()) > 0) await tab.first().click();
    else {
      await this.page.keyboard.press("Control+P");
      await this.quickInput.waitFor({ state: "visible", timeout: uiTimeout });
      await this.quickInput.fill(relativePath);
      // A file's row is labelled with its name, then its folder.
      const row = this.page.locator(`.quick-input-widget .monaco-list-row[aria-label^="${name} "]`);
      await row.first().waitFor({ state: "visible", timeout: uiTimeout });
      await row.first().click();
    }
    await expect.poll(() => this.activeTabName(), { timeout: uiTimeout }).toBe(name);
    await this.editor.locator(".view-lines").waitFor({ state: "visible", timeout: uiTimeout });
    await this.focusEditor();
  }

  /** The file name on the active tab. */
  async activeTabName(): Promise<string> {
    return (await this.page.locator(".editor-group-container.active .tabs-container .tab.active").first().getAttribute("data-resource-name", { timeout: 1_000 }).catch(() => null)) ?? "";
  }

  /** Gives the active editor the keyboard focus. */
  async focusEditor(): Promise<void> {
    await this.editor.locator("textarea, .native-edit-context").first().focus();
  }

  /** Moves the cursor to a line and column, both from 1 (quick open's `:line:column`, as Go to Line does). */
  async goTo(line: number, column = 1): Promise<void> {
    // Quick open can be closed under it by the workbench moving the focus a moment after it opened
    // (a file just opened, a language server's first answer): the input is then inert, and the
    // whole gesture is made again, up to three times.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.dismissWidgets();
        await this.focusEditor();
        await this.page.keyboard.press("Control+P");
        await this.quickInput.waitFor({ state: "visible", timeout: uiTimeout });
        await this.quickInput.fill(`:${line}:${column}`, { timeout: uiTimeout });
        await this.page.locator(".quick-input-widget .monaco-list-row", { hasText: `line ${line}` }).first().waitFor({ state: "visible", timeout: uiTimeout });
        await this.page.keyboard.press("Enter");
        await this.quickInput.waitFor({ state: "hidden", timeout: uiTimeout });
        await this.focusEditor();
        return;
      } catch (error) {
        if (attempt === 3) throw error;
      }
    }
  }

  /** Closes whatever widget has the focus (suggestions, hovers, quick input). */
  async dismissWidgets(): Promise<void> {
    for (let turn = 0; turn < 2; turn++) await this.page.keyboard.press("Escape");
  }

  /** The text of the active editor's visible lines (VS Code renders spaces as no-break spaces). */
  async visibleText(): Promise<string> {
    const lines = await this.editor.locator(".view-lines .view-line").evaluateAll((elements) =>
      elements
        .map((element) => ({ top: Number.parseFloat((element as HTMLElement).style.top || "0"), text: element.textContent ?? "" }))
        .sort((a, b) => a.top - b.top)
        .map((line) => line.text.replace(/\u00a0/g, " ")),
    );
    return lines.join("\n");
  }

  /** The rendered token (a span inside a view line) whose text is exactly `text`. */
  token(text: string): Locator {
    return this.editor.locator(".view-lines .view-line span span", { hasText: exactly(text) });
  }

  /** Opens the Problems panel and returns its rows. */
  async problems(): Promise<Locator> {
    await this.runCommand("View: Focus Problems (Errors, Warnings, Infos)");
    return this.page.locator(".markers-panel .monaco-list-row");
  }

  /** How many times the active editor's text (the whole document, not only the lines in view) holds `text`: Find's count, "1 of 3", or "No results". */
  async findCount(text: string): Promise<string> {
    await this.focusEditor();
    await this.page.keyboard.press("Control+F");
    const input = this.page.locator(".find-widget textarea, .find-widget input").first();
    await input.waitFor({ state: "visible", timeout: uiTimeout });
    await input.fill(text);
    const count = this.page.locator(".find-widget .matchesCount");
    await expect.poll(() => count.textContent(), { timeout: uiTimeout }).toMatch(/^(\d+ of \d+|\?\s*of \d+|No results)$/);
    const found = (await count.textContent()) ?? "";
    await this.dismissWidgets();
    return found;
  }
}

/** A regular expression that matches exactly the text. */
export function exactly(text: string): RegExp {
  return new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
}
