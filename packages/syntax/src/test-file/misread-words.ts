import { closestName, diagnostic, type Diagnostic } from "@vigil/diagnostics";
import type { HandEvent, TestCase } from "./ast.js";

/**
 * Words the reader takes for events that were most likely meant as something else: a misspelled
 * status after a call, a bare `at` with no time after it. Either reads without a syntax error and
 * shifts the positions of every later event, so each is reported (V2109, V2006).
 */

/**
 * A bare word right after an event on its line that is nearly a status or `output` (`okay`,
 * `eror`), or another word for one (`failed`, `success`), is read as the next event, an action of
 * that name, which shifts every later position and leaves the call's status `ok`: a test of a
 * failed call would pass on a call that succeeded. An error (V2109): an action of that name on the
 * line of another event is written in quotes.
 */
export function misspelledStatuses(events: readonly HandEvent[]): Diagnostic[] {
  const problems: Diagnostic[] = [];
  events.forEach((event, index) => {
    const previous = events[index - 1];
    if (previous === undefined || previous.span.endLine !== event.span.line || event.kind === "message") return;
    if (event.argsJson !== "{}" || event.output !== undefined || event.status !== "ok" || event.span.end - event.span.start !== event.action.length) return;
    const folded = event.action.toLowerCase();
    // A slip of a letter or two (`eror`, `okk`, `outputs`), not an action that merely starts like a
    // status or is near one in a longer name (`okta_login`, `output_log`).
    const nearly = (word: string | undefined) => (word !== undefined && Math.abs(folded.length - word.length) <= 2 ? word : undefined);
    // A slip in another word for a status (`fialed`, `sucess`) is that word's status too.
    const slipped = nearly(closestName(folded, statusSynonyms.keys()));
    const near =
      statusSynonyms.get(folded) ??
      nearly(closestName(event.action, statusWords)) ??
      (slipped !== undefined ? statusSynonyms.get(slipped) : undefined) ??
      statusWords.find((word) => folded.startsWith(word) && nearly(word) !== undefined);
    if (near === undefined || near === event.action) return;
    problems.push(
      diagnostic("V2109", `\`${event.action}\` is read as another event, an action of that name; did you mean \`${near}\`?`, {
        span: event.span,
        help: "a status follows its event's arguments: `ok`, `error` or `pending`; an action of this name on the same line is written in quotes",
        fix: { title: `replace with \`${near}\``, edits: [{ span: event.span, newText: near }] },
      }),
    );
  });
  return problems;
}

const statusWords = ["ok", "error", "pending", "output"];

/** Other words for a status, as people write them after a call. */
const statusSynonyms: ReadonlyMap<string, string> = new Map([
  ...["okay", "success", "succeeded", "successful", "succeed", "passed", "pass"].map((word) => [word, "ok"] as const),
  ...["failed", "fail", "failure", "failing", "fails", "err", "errored", "erred"].map((word) => [word, "error"] as const),
]);

/**
 * A bare `at` on the line of the event before it, not followed by a time, is read as the next
 * event, an action named `at`: most likely a time left out or mistyped (`at five`), or a second
 * time (V2006). An action of that name is written in quotes, or on a line of its own.
 */
export function timesWithoutValue(file: { readonly tests?: readonly TestCase[] }, text: string): Diagnostic[] {
  const problems: Diagnostic[] = [];
  for (const test of file.tests ?? []) {
    const input = test?.input;
    if (input?.kind !== "events") continue;
    input.events.forEach((event, index) => {
      const previous = input.events[index - 1];
      if (previous === undefined || previous.span.endLine !== event.span.line || event.kind === "message" || event.action !== "at") return;
      // Bare: the word as written, not the string `"at"`.
      if (!/^at(?![A-Za-z0-9_-])/.test(text.slice(event.span.start, event.span.start + 3))) return;
      const word = { ...event.span, end: event.span.start + 2, endLine: event.span.line, endColumn: event.span.column + 2 };
      problems.push(
        diagnostic("V2006", "this `at` is read as another event, an action named `at`: an event's time follows `at` directly", {
          span: word,
          help: 'write the time after it (`at 90s`, `at "2026-11-27T10:00:00Z"`), once per event; an action named `at` on the line of another event is written in quotes',
        }),
      );
    });
  }
  return problems;
}
