import { posix } from "node:path";
import { isJsonObject, type JsonValue } from "@vigil/trace";
import type { CallEvent } from "./call-events.js";

/**
 * How the guard reads a grounded event's arguments: the program it runs, its positional words,
 * the strings that may be paths and the texts that may mention one, apart from the keys grounding
 * adds to name programs.
 */

/** The positional words of an event (`arg1`, `arg2`, …), in order. */
export function positionalsOf(args: CallEvent["args"]): string[] {
  return Object.keys(args)
    .filter((key) => /^arg[0-9]+$/.test(key))
    .flatMap((key) => strings(args[key]));
}

/** The argument values that may be paths: the strings of the arguments, but the grounding's own keys. */
export function pathLike(args: { readonly [key: string]: JsonValue }): string[] {
  const found: string[] = [];
  const visit = (value: JsonValue, depth: number) => {
    if (depth > 8) return;
    if (typeof value === "string") {
      if (value !== "" && !/[\n\r]/.test(value)) found.push(value);
    } else if (Array.isArray(value)) value.forEach((item) => visit(item, depth + 1));
    else if (isJsonObject(value)) Object.values(value).forEach((item) => visit(item, depth + 1));
  };
  for (const [key, value] of Object.entries(args)) if (!GROUNDING_KEYS.has(key)) visit(value, 0);
  return found;
}

/** Texts in which a path may be mentioned anywhere: every string of a command's arguments. */
export function textsOf(args: { readonly [key: string]: JsonValue }): string[] {
  const found: string[] = [];
  for (const [key, value] of Object.entries(args)) {
    if (GROUNDING_KEYS.has(key)) continue;
    for (const text of strings(value)) found.push(text);
  }
  return found;
}

/** Keys grounding adds that name programs, not paths. */
export const GROUNDING_KEYS = new Set(["program", "via", "piped_from", "by", "reason", "description"]);

/** The program an event runs (for a grounded command), or its action. */
export function programOf(event: CallEvent): string {
  const program = event.args["program"];
  // awk's code takes the place of its name under `program` (the catalog's role for it).
  if (event.action === "awk") return "awk";
  return typeof program === "string" ? posix.basename(program) : event.action;
}

export function strings(value: JsonValue | undefined): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === "string");
  return [];
}
