import { ruleId } from "@vigil/compiler";
import { runErrorText, runLabel, statusLabel, TIMELINE_WITNESSES_PER_RULE, type RunOutcome, type StatementResult, type TimelineEntry, type TimelineEvent, type TimelineGap } from "./outcome.js";

/**
 * The HTML report of `vigilc check --html`: one self-contained page (no external resource; a
 * Content-Security-Policy forbids loading any), with the verdicts per rule and, per run, a timeline
 * of its events in which each witness is highlighted beside the text of the rule it violates.
 *
 * Traces are untrusted text (a prompt injection is exactly text meant to be acted upon), so every
 * value from a trace or a policy goes through {@link escapeHtml}; the page's only script is its
 * own filter, and it reads data attributes, never markup.
 */

export interface RuleText {
  /** `POLICY.NAME`. */
  readonly id: string;
  readonly doc?: string;
  /** The rule's declaration as written in the policy file. */
  readonly source: string;
  /** What a violation does; when absent, it is read off the runs' verdicts (and is `block` without any). */
  readonly response?: StatementResult["response"];
  readonly remediation?: string;
}

/** What a rule's violation does, and what it tells the agent: shown beside the rule. */
interface RuleResponse {
  readonly response: StatementResult["response"];
  readonly remediation?: string;
}

export interface HtmlReportOptions {
  readonly policyFile: string;
  /** Every rule of the policy, in declaration order. */
  readonly rules: readonly RuleText[];
  readonly version: string;
  /** When the report was made (ISO 8601); shown in the header. */
  readonly generatedAt: string;
  /** Runs' timelines start open when at most this many runs are unsafe (default 25). */
  readonly openUpTo?: number;
}

const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => escapes[c]!);
}

function plural(count: number, noun: string): string {
  return `${count.toLocaleString("en-US")} ${noun}${count === 1 ? "" : "s"}`;
}

/** A token safe in an id or a class list, derived from a rule id. */
function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0).toString(16)}`);
}

/**
 * The response of a rule and its remediation, as one paragraph: the response a badge (its class
 * colours it), the remediation text beside it.
 */
function renderResponse(rule: RuleResponse | undefined): string {
  if (rule === undefined) return "";
  const remediation = rule.remediation !== undefined ? ` <span class="remediation">${escapeHtml(rule.remediation)}</span>` : "";
  const word = escapeHtml(rule.response);
  return `<p class="response">response <span class="response-word ${word}">${word}</span>${remediation}</p>`;
}

function isGap(entry: TimelineEntry): entry is TimelineGap {
  return "hidden" in entry;
}

function verdictOf(outcome: RunOutcome): "safe" | "unsafe" | "failed" {
  return outcome.verdict ?? "failed";
}

function renderEvent(
  runIndex: number,
  event: TimelineEvent,
  violated: ReadonlyMap<number, readonly string[]>,
  rules: ReadonlyMap<string, RuleText>,
  responses: ReadonlyMap<string, RuleResponse>,
): string {
  const broken = violated.get(event.position) ?? [];
  const status = statusLabel(event);
  const classes = ["event", broken.length > 0 ? "witness" : "", event.groundedFrom !== undefined ? "grounded" : ""].filter(Boolean).join(" ");
  const args = event.args
    .map(([key, value]) => `<span class="arg"><span class="key">${escapeHtml(key)}</span>=<span class="value">${escapeHtml(value)}</span></span>`)
    .join(" ");
  const origin = [
    event.line !== undefined ? `line ${event.line}` : "",
    event.callId !== undefined ? `call ${escapeHtml(event.callId)}` : "",
    event.groundedFrom !== undefined ? `grounded from <a href="#r${runIndex}e${event.groundedFrom}">event ${event.groundedFrom}</a>` : "",
  ].filter(Boolean).join(" · ");
  const notes = broken.length === 0 ? "" : `<div class="notes">${broken
    .map((id) => {
      const rule = rules.get(id);
      return (
        `<aside class="note"><div class="note-head">violates <a href="#rule-${slug(id)}">${escapeHtml(id)}</a></div>` +
        (rule?.doc !== undefined ? `<p>${escapeHtml(rule.doc)}</p>` : "") +
        renderResponse(responses.get(id)) +
        (rule !== undefined ? `<details><summary>rule text</summary><pre>${escapeHtml(rule.source)}</pre></details>` : "") +
        `</aside>`
      );
    })
    .join("")}</div>`;
  return (
    `<li class="${classes}" id="r${runIndex}e${event.position}">` +
    `<div class="call"><span class="pos">${event.position}</span>` +
    `<span class="action">${escapeHtml(event.action)}</span>` +
    `<span class="status ${status}">${status}</span>` +
    (args !== "" ? ` <span class="args">${args}</span>` : "") +
    (event.output !== undefined ? `<div class="output">${escapeHtml(event.output)}</div>` : "") +
    (origin !== "" ? `<div class="origin">${origin}</div>` : "") +
    `</div>${notes}</li>`
  );
}

function renderRun(
  index: number,
  outcome: RunOutcome,
  rules: ReadonlyMap<string, RuleText>,
  responses: ReadonlyMap<string, RuleResponse>,
  open: boolean,
): string {
  const verdict = verdictOf(outcome);
  const brokenStatements = outcome.statements.filter((s) => !s.holds);
  const violated = new Map<number, string[]>();
  // Only the events the timeline shows are marked (a long run's witnesses are mostly not shown).
  const shown = new Set((outcome.timeline ?? []).flatMap((entry) => (isGap(entry) ? [] : [entry.position])));
  for (const statement of brokenStatements) {
    for (const position of statement.witnesses) {
      if (!shown.has(position)) continue;
      const id = ruleId(statement);
      violated.set(position, [...(violated.get(position) ?? []), id]);
    }
  }
  const ruleIds = brokenStatements.map(ruleId);
  const headline = brokenStatements
    .map((s) => {
      const id = ruleId(s);
      const where = s.undecided !== undefined
        ? `undecided: ${escapeHtml(s.undecided)}`
        : s.witnesses
            .slice(0, TIMELINE_WITNESSES_PER_RULE)
            .map((w) => `<a href="#r${index}e${w}">${w}</a>`)
            .join(", ") + (s.witnesses.length > TIMELINE_WITNESSES_PER_RULE ? ` and ${s.witnesses.length - TIMELINE_WITNESSES_PER_RULE} more` : "");
      return `<span class="broken">${escapeHtml(id)} at ${where}</span>`;
    })
    .join(" ");
  const body: string[] = [];
  for (const error of outcome.errors) body.push(`<p class="error">${escapeHtml(runErrorText(error))}</p>`);
  for (const statement of brokenStatements) {
    if (statement.undecided !== undefined) {
      body.push(`<p class="error">${escapeHtml(ruleId(statement))} could not be decided (${escapeHtml(statement.undecided)}); the run counts as unsafe.</p>`);
    }
  }
  if (outcome.timeline !== undefined) {
    if (outcome.timeline.length === 0) body.push(`<p class="empty">The run has no events.</p>`);
    else {
      const items = outcome.timeline.map((entry) =>
        isGap(entry)
          ? `<li class="gap">${plural(entry.hidden, "event")} ${
              entry.witnesses !== undefined ? `not shown, ${plural(entry.witnesses, "witness event")} among them (every witness is listed in the JSON and SARIF reports)` : "without a violation not shown"
            }</li>`
          : renderEvent(index, entry, violated, rules, responses),
      );
      body.push(`<ol class="timeline">${items.join("")}</ol>`);
    }
  }
  const facts = [plural(outcome.events, "event"), outcome.format !== undefined ? escapeHtml(outcome.format) : ""].filter(Boolean).join(" · ");
  return (
    `<article class="run" id="run${index}" data-verdict="${verdict}" data-rules="${ruleIds.map(slug).join(" ")}" data-file="${escapeHtml(runLabel(outcome).toLowerCase())}">` +
    `<details${open ? " open" : ""}><summary><span class="badge ${verdict}">${verdict}</span> ` +
    `<span class="file">${escapeHtml(runLabel(outcome))}</span> <span class="facts">${facts}</span>` +
    (headline !== "" ? `<div class="headline">${headline}</div>` : "") +
    `</summary>${body.join("")}</details></article>`
  );
}

const style = `
:root { color-scheme: light dark; --bad: #c62828; --bad-bg: #fdecea; --ok: #2e7d32; --ok-bg: #e8f5e9; --muted: #666; --line: #ddd; --warn: #8d6e00; --warn-bg: #fff8e1; }
@media (prefers-color-scheme: dark) { :root { --bad: #ef9a9a; --bad-bg: #3b1f1f; --ok: #a5d6a7; --ok-bg: #1e3320; --muted: #aaa; --line: #444; --warn: #ffe082; --warn-bg: #3a3320; } }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1200px; padding: 1.5rem; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; } h2 { font-size: 1.1rem; margin: 2rem 0 .5rem; }
code, pre, .file, .action, .args, .output, .pos { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.meta { color: var(--muted); margin: 0; }
.totals { display: flex; gap: .75rem; margin: 1rem 0; flex-wrap: wrap; }
.total { border: 1px solid var(--line); border-radius: 6px; padding: .4rem .8rem; }
.total b { font-size: 1.2rem; display: block; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; border-bottom: 1px solid var(--line); padding: .4rem .5rem; }
td.count { text-align: right; white-space: nowrap; }
tr.violated td:first-child code { color: var(--bad); font-weight: 600; }
pre { white-space: pre-wrap; margin: .3rem 0 0; }
td p { margin: 0 0 .3rem; }
.badge { display: inline-block; min-width: 4.5em; text-align: center; border-radius: 4px; padding: 0 .4em; font-weight: 600; font-size: 12px; }
.badge.unsafe { background: var(--bad-bg); color: var(--bad); } .badge.safe { background: var(--ok-bg); color: var(--ok); } .badge.failed { background: var(--warn-bg); color: var(--warn); }
.filters { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; margin-bottom: .75rem; }
.filters button { font: inherit; border: 1px solid var(--line); background: none; color: inherit; border-radius: 4px; padding: .2rem .6rem; cursor: pointer; }
.filters button[aria-pressed="true"] { border-color: currentColor; font-weight: 600; }
.filters input { font: inherit; padding: .2rem .4rem; min-width: 16rem; }
.run { border: 1px solid var(--line); border-radius: 6px; margin: .4rem 0; }
.run > details > summary { cursor: pointer; padding: .4rem .6rem; }
.run[data-verdict="unsafe"] { border-left: 4px solid var(--bad); }
.run[data-verdict="failed"] { border-left: 4px solid var(--warn); }
.facts { color: var(--muted); margin-left: .5rem; }
.headline { margin: .2rem 0 0 5.2em; } .broken { color: var(--bad); margin-right: 1rem; }
.timeline { list-style: none; margin: 0; padding: 0 .6rem .6rem; }
.event { display: grid; grid-template-columns: minmax(0, 1fr); gap: .5rem; padding: .3rem .4rem; border-top: 1px solid var(--line); }
.event.witness { grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); background: var(--bad-bg); border-left: 3px solid var(--bad); }
.event.grounded .call { padding-left: 1.5rem; }
.event:target { outline: 2px solid currentColor; }
.pos { display: inline-block; min-width: 3em; color: var(--muted); }
.action { font-weight: 600; margin-right: .5rem; }
.status { font-size: 11px; border-radius: 3px; padding: 0 .3em; margin-right: .3rem; }
.status.ok { background: var(--ok-bg); color: var(--ok); } .status.error { background: var(--bad-bg); color: var(--bad); } .status.pending { border: 1px dashed var(--muted); color: var(--muted); } .status.message { border: 1px solid var(--line); color: var(--muted); }
.arg { margin-right: .6rem; word-break: break-word; } .key { color: var(--muted); }
.output { color: var(--muted); white-space: pre-wrap; word-break: break-word; margin: .15rem 0 0 3em; max-height: 6em; overflow: auto; }
.origin { color: var(--muted); font-size: 12px; margin-left: 3em; }
.note { border-left: 2px solid var(--bad); padding-left: .6rem; }
.note + .note { margin-top: .5rem; }
.note-head { font-weight: 600; color: var(--bad); } .note p { margin: .2rem 0; }
.response { color: var(--muted); } .remediation { color: CanvasText; }
.response-word { font-weight: 600; border-radius: 3px; padding: 0 .3em; }
.response-word.block, .response-word.halt, .response-word.quarantine { background: var(--bad-bg); color: var(--bad); } .response-word.warn, .response-word.ask { background: var(--warn-bg); color: var(--warn); }
.gap { color: var(--muted); font-style: italic; padding: .3rem .4rem; border-top: 1px dashed var(--line); }
.error { color: var(--warn); background: var(--warn-bg); padding: .3rem .6rem; margin: .3rem .6rem; white-space: pre-wrap; }
.empty { color: var(--muted); padding: 0 .6rem; }
[hidden] { display: none !important; }
`;

// The filter: by verdict, by violated rule (from the rules table) and by file or run name. Without
// scripts the page shows every run.
const script = `
(() => {
  const runs = [...document.querySelectorAll(".run")];
  const buttons = [...document.querySelectorAll(".filters button[data-verdict]")];
  const search = document.querySelector(".filters input");
  const ruleNote = document.querySelector(".filters .rule-filter");
  let verdict = "all", rule = "";
  const apply = () => {
    const text = search.value.trim().toLowerCase();
    let shown = 0;
    for (const run of runs) {
      const show = (verdict === "all" || run.dataset.verdict === verdict)
        && (rule === "" || run.dataset.rules.split(" ").includes(rule))
        && (text === "" || run.dataset.file.includes(text));
      run.hidden = !show;
      if (show) shown++;
    }
    for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.verdict === verdict));
    ruleNote.hidden = rule === "";
    ruleNote.querySelector("span").textContent = rule === "" ? "" : document.getElementById("rule-" + rule).dataset.id;
    document.querySelector(".filters .shown").textContent = shown + " shown";
  };
  for (const b of buttons) b.addEventListener("click", () => { verdict = b.dataset.verdict; apply(); });
  search.addEventListener("input", apply);
  ruleNote.querySelector("button").addEventListener("click", () => { rule = ""; apply(); });
  for (const a of document.querySelectorAll("a[data-rule]")) {
    a.addEventListener("click", () => { rule = a.dataset.rule; verdict = "all"; apply(); });
  }
  apply();
})();
`;

export function toHtml(outcomes: readonly RunOutcome[], options: HtmlReportOptions): string {
  const rules = new Map(options.rules.map((rule) => [rule.id, rule]));
  const violatedIn = new Map<string, number>(options.rules.map((rule) => [rule.id, 0]));
  // A rule's response as the options give it, else as the verdicts of the runs carry it.
  const responses = new Map<string, RuleResponse>();
  for (const rule of options.rules) {
    if (rule.response !== undefined) responses.set(rule.id, { response: rule.response, ...(rule.remediation !== undefined ? { remediation: rule.remediation } : {}) });
  }
  for (const outcome of outcomes) {
    for (const statement of outcome.statements) {
      const id = ruleId(statement);
      if (!statement.holds) violatedIn.set(id, (violatedIn.get(id) ?? 0) + 1);
      if (!responses.has(id) && statement.response !== undefined) {
        responses.set(id, { response: statement.response, ...(statement.remediation !== undefined ? { remediation: statement.remediation } : {}) });
      }
    }
  }
  const counts = { safe: 0, unsafe: 0, failed: 0 };
  for (const outcome of outcomes) counts[verdictOf(outcome)]++;
  const events = outcomes.reduce((sum, o) => sum + o.events, 0);
  const judged = counts.safe + counts.unsafe;
  const overall = counts.unsafe > 0 || counts.failed > 0 ? "unsafe" : "safe";
  const openRuns = counts.unsafe + counts.failed <= (options.openUpTo ?? 25);

  const ruleRows = [...violatedIn].map(([id, runs]) => {
    const rule = rules.get(id);
    return (
      `<tr id="rule-${slug(id)}" data-id="${escapeHtml(id)}" class="${runs > 0 ? "violated" : ""}"><td><code>${escapeHtml(id)}</code></td>` +
      `<td>${rule?.doc !== undefined ? `<p>${escapeHtml(rule.doc)}</p>` : ""}${renderResponse(responses.get(id))}${rule !== undefined ? `<details><summary>rule text</summary><pre>${escapeHtml(rule.source)}</pre></details>` : ""}</td>` +
      `<td class="count">${runs > 0 ? `<a href="#runs" data-rule="${slug(id)}">${plural(runs, "run")}</a>` : "0 runs"} of ${judged.toLocaleString("en-US")}</td></tr>`
    );
  });

  const runItems = outcomes.map((outcome, index) => renderRun(index + 1, outcome, rules, responses, openRuns && outcome.verdict !== "safe"));
  const title = `Vigil report: ${options.policyFile}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="generator" content="vigilc ${escapeHtml(options.version)}">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body>
<header>
<h1>Vigil report <span class="badge ${overall}">${overall}</span></h1>
<p class="meta">policy <code>${escapeHtml(options.policyFile)}</code> · ${plural(outcomes.length, "run")} · ${plural(events, "event")} · made ${escapeHtml(options.generatedAt)} by vigilc ${escapeHtml(options.version)}</p>
<div class="totals">
<div class="total"><b>${counts.unsafe.toLocaleString("en-US")}</b>unsafe</div>
<div class="total"><b>${counts.safe.toLocaleString("en-US")}</b>safe</div>
<div class="total"><b>${counts.failed.toLocaleString("en-US")}</b>could not be checked</div>
</div>
</header>
<main>
<section id="rules">
<h2>Rules</h2>
<table><thead><tr><th>rule</th><th>what it requires</th><th>violated in</th></tr></thead>
<tbody>${ruleRows.join("\n")}</tbody></table>
</section>
<section id="runs">
<h2>Runs</h2>
<div class="filters">
<button type="button" data-verdict="all">all</button>
<button type="button" data-verdict="unsafe">unsafe</button>
<button type="button" data-verdict="failed">could not be checked</button>
<button type="button" data-verdict="safe">safe</button>
<input type="search" placeholder="filter by file or run name" aria-label="filter by file or run name">
<span class="rule-filter" hidden>violating <span></span> <button type="button">show all rules</button></span>
<span class="shown"></span>
</div>
${runItems.join("\n")}
</section>
</main>
<script>${script}</script>
</body>
</html>
`;
}
