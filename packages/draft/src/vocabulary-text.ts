import type { JsonValue } from "@vigil/compiler";
import { DISTINCT_COUNTED, type ActionVocabulary, type JsonType, type PathVocabulary, type Vocabulary } from "./vocabulary.js";

/**
 * The vocabulary as the model reads it: one block per action, each argument path and output path on
 * a line with its type and a few values. Bounded: at most {@link ACTIONS_DETAILED} actions in detail
 * (the others by name), at most {@link ARGS_SHOWN} argument paths and {@link OUTPUT_PATHS_SHOWN}
 * output paths per action (those most of its events have), at most
 * {@link SAMPLES_SHOWN} values per path unless it has at most {@link ALL_VALUES_UP_TO}, texts cut
 * short when the vocabulary was built.
 */

const ARGS_SHOWN = 24;
const OUTPUT_PATHS_SHOWN = 24;
/** Actions beyond this many (those with the fewest events) are listed by name only. */
const ACTIONS_DETAILED = 60;
const SAMPLES_SHOWN = 3;
const ALL_VALUES_UP_TO = 6;

/** The words of the language that a bare key would be read as: written quoted in a path. */
const reserved = new Set(["policy", "pattern", "rule", "abs", "prec", "resp", "bresp", "rslv", "until", "always", "not", "and", "or", "implies", "once", "eventually", "in", "action", "status", "output", "ok", "error", "true", "false", "null"]);

/** A name as a policy writes it in a path: bare when it lexes as an identifier, quoted otherwise. */
export function nameInPath(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !reserved.has(name) ? name : JSON.stringify(name);
}

/** A path as a policy writes it: `passengers.first_name`, `output.flights.date`. */
export function pathText(path: readonly string[], output = false): string {
  const names = path.map(nameInPath).join(".");
  return output ? `output.${names}` : names;
}

/** The request's paragraph on the vocabulary, with the block of its actions. */
export function vocabularyText(vocabulary: Vocabulary): string {
  const intro =
    `The vocabulary of the agent's runs (${count(vocabulary.runs, "run")}, ${count(vocabulary.events, "event")}): each action with how many events it has; ` +
    "its argument keys (a dotted path leads into an object; a list's elements are under the list's own key), each with its JSON type, in how many events when not in all, and some values (all of them when few); " +
    "how many of its outputs are JSON objects, and the paths into those (written `output.PATH`). A key belongs to the actions listing it: use it only on them.";
  const detailed = new Set([...vocabulary.actions].sort((a, b) => b.events - a.events).slice(0, ACTIONS_DETAILED));
  const others = vocabulary.actions.filter((action) => !detailed.has(action));
  const rest = others.length === 0 ? [] : [`${others.length} more actions, by name (with how many events): ${others.map((action) => `${action.action} (${action.events})`).join(", ")}`];
  return `${intro}\n\`\`\`text\n${[...vocabulary.actions.filter((action) => detailed.has(action)).map(actionText), ...rest].join("\n")}\n\`\`\``;
}

function actionText(action: ActionVocabulary): string {
  const lines: string[] = [];
  if (action.message) lines.push(`${action.action}: ${count(action.events, "event")}, ${action.action === "user_message" ? "what the user said" : action.action === "agent_message" ? "what the agent said" : "messages"} (a message of the conversation: no status, no output)`);
  else {
    const outputs = action.outputs === 0 ? "no output" : `${count(action.outputs, "output")}${action.jsonOutputs > 0 ? `, ${action.jsonOutputs === action.outputs ? "all" : action.jsonOutputs} JSON objects` : ", none a JSON object"}`;
    lines.push(`${action.action}: ${count(action.events, "event")}; ${outputs}`);
  }
  if (action.args.length === 0) lines.push("  (no arguments)");
  lines.push(...pathLines(action.args, action.events, ARGS_SHOWN, false, "argument"));
  if (action.jsonOutputs > 0) lines.push(...pathLines(action.outputPaths, action.jsonOutputs, OUTPUT_PATHS_SHOWN, true, "output"));
  return lines.join("\n");
}

/** The lines of the paths most events have, in path order, and how many more there are. */
function pathLines(paths: readonly PathVocabulary[], total: number, shown: number, output: boolean, what: string): string[] {
  const chosen = new Set([...paths].sort((a, b) => b.events - a.events || a.path.length - b.path.length).slice(0, shown));
  const lines = paths.filter((path) => chosen.has(path)).map((path) => `  - ${pathText(path.path, output)}: ${typeText(path)}${path.events < total ? `, in ${path.events}` : ""}${valuesText(path)}`);
  if (paths.length > shown) lines.push(`  - … and ${paths.length - shown} more ${what} paths (in no more events than those above)`);
  return lines;
}

function typeText(path: PathVocabulary): string {
  const plain = path.types.filter((type) => type !== "list");
  const list = path.types.includes("list") ? [`list of ${(path.elementTypes ?? []).filter((type: JsonType) => type !== "list").join(" or ") || "lists"}${path.longestList !== undefined ? ` (up to ${path.longestList})` : ""}`] : [];
  return [...plain, ...list].join(" or ");
}

function valuesText(path: PathVocabulary): string {
  if (path.samples.length === 0) return "";
  if (path.distinct <= ALL_VALUES_UP_TO) return `; ${path.samples.map(valueText).join(", ")}`;
  const many = path.distinct >= DISTINCT_COUNTED ? `${DISTINCT_COUNTED} or more distinct` : `${path.distinct} distinct`;
  return `; ${path.samples.slice(0, SAMPLES_SHOWN).map(valueText).join(", ")}, … (${many})`;
}

function valueText(value: JsonValue): string {
  return JSON.stringify(value) ?? String(value);
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
