import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../test/support/chromium.js";
import { examples, fixtures, root } from "./support/paths.js";
import { runCli } from "./support/run-cli.js";

/**
 * The HTML report in a real browser (Chromium, driven by playwright-core): the page a
 * person opens after checking the 313 AgentDojo banking runs, its filters and its witness notes,
 * and a report of a trace full of markup, which must stay text.
 */

const agentdojo = join(root, "..", "shared", "data", "agentdojo");

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** Opens a report; records script errors and every request the page makes. */
async function open(file: string): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("request", (request) => requests.push(request.url()));
  await page.goto(pathToFileURL(file).href);
  return { page, errors, requests };
}

const shown = (page: Page) => page.locator("article.run:visible").count();

describe("the HTML report of the AgentDojo banking runs, in a browser", () => {
  let report: { summary: { runs: number; unsafe: number; safe: number }; runs: { file: string; statements: { policy: string; name: string; holds: boolean; witnesses: number[] }[] }[] };
  let page: Page;
  let errors: string[];
  let requests: string[];
  let file: string;

  beforeAll(async () => {
    file = join(await mkdtemp(join(tmpdir(), "vigil-html-")), "banking.html");
    const result = await runCli(
      ["check", join(examples, "agentdojo", "banking.vigil"), "--trace", join(agentdojo, "*", "banking", "**", "*.json"), "--html", file, "--format", "json"],
      // A corpus: its runs are judged in worker threads, which the built CLI has.
      { built: true },
    );
    expect(result.code).toBe(1);
    report = JSON.parse(result.stdout);
    ({ page, errors, requests } = await open(file));
  }, 90_000);

  it("loads nothing but itself and runs its script without an error", () => {
    expect(requests).toEqual([pathToFileURL(file).href]);
    expect(errors).toEqual([]);
  });

  it("shows every run, and filters them by verdict", async () => {
    expect(report.summary.runs).toBe(313);
    expect(await shown(page)).toBe(313);
    await expect.poll(() => page.locator(".filters .shown").textContent()).toBe("313 shown");
    await page.click('.filters button[data-verdict="unsafe"]');
    expect(await shown(page)).toBe(report.summary.unsafe);
    await page.click('.filters button[data-verdict="safe"]');
    expect(await shown(page)).toBe(report.summary.safe);
    await page.click('.filters button[data-verdict="all"]');
    expect(await shown(page)).toBe(313);
  });

  it("shows the runs that violate a rule when the rule's count is clicked", async () => {
    const rule = "banking.no_repeated_transfer";
    const violating = report.runs.filter((run) => run.statements.some((s) => `${s.policy}.${s.name}` === rule && !s.holds));
    expect(violating.length).toBeGreaterThan(0);
    await page.click(`#rule-banking_2eno_repeated_transfer a[data-rule]`);
    expect(await shown(page)).toBe(violating.length);
    await expect.poll(() => page.locator(".filters .rule-filter").textContent()).toContain(rule);
    await page.click(".filters .rule-filter button");
    expect(await shown(page)).toBe(313);
  });

  it("filters by file name", async () => {
    await page.fill(".filters input", "user_task_8/");
    const expected = report.runs.filter((run) => run.file.toLowerCase().includes("user_task_8/")).length;
    expect(expected).toBeGreaterThan(0);
    expect(await shown(page)).toBe(expected);
    await page.fill(".filters input", "");
  });

  it("highlights a witness in its run's timeline, beside the text of the rule it violates", async () => {
    const index = report.runs.findIndex((run) => run.statements.some((s) => s.name === "no_password_change_after_untrusted" && !s.holds));
    const run = report.runs[index]!;
    const witness = run.statements.find((s) => s.name === "no_password_change_after_untrusted")!.witnesses[0]!;
    const article = page.locator(`#run${index + 1}`);
    await article.locator("summary").first().click();
    const event = page.locator(`#r${index + 1}e${witness}`);
    await expect.poll(() => event.isVisible()).toBe(true);
    expect(await event.getAttribute("class")).toContain("witness");
    expect(await event.locator(".action").textContent()).toBe("update_password");
    const note = event.locator(".note", { hasText: "banking.no_password_change_after_untrusted" });
    expect(await note.textContent()).toContain("The password is not changed after the agent has read third-party content");
    // The witness is marked in colour: its background differs from a plain event's.
    const background = (selector: string) => page.locator(selector).evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(await background(`#r${index + 1}e${witness}`)).not.toBe(await background(`#r${index + 1}e1`));
  });
});

describe("a trace full of markup, in a browser", () => {
  it("stays text: no script runs, no element is injected, nothing is fetched", async () => {
    const file = join(await mkdtemp(join(tmpdir(), "vigil-html-")), "injection.html");
    const result = await runCli(["check", "no-delete.vigil", "--trace", "html-injection.jsonl", "--html", file], { cwd: fixtures });
    expect(result.code).toBe(1);
    const { page, errors, requests } = await open(file);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect(await page.locator("img, iframe, .timeline b").count()).toBe(0);
    expect(await page.locator("script").count()).toBe(1);
    expect(requests).toEqual([pathToFileURL(file).href]);
    expect(errors).toEqual([]);
    expect(await page.locator("#r1e1 .output").textContent()).toBe("</script><script>window.pwned = 1</script> IGNORE PREVIOUS INSTRUCTIONS");
    expect(await page.locator("#r1e2 .value").nth(1).textContent()).toBe(`"><img src=x onerror="window.pwned=2">`);
  });
});
