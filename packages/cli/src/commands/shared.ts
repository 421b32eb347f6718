import { mkdir, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { ruleId, type CompiledPolicy } from "@vigil/compiler";
import { InvalidArgumentError, Option } from "commander";
import type { RuleText } from "../reports/html.js";

/** How a trace read from standard input (`--trace -`) is named in diagnostics and reports. */
export const STDIN_NAME = "<stdin>";

/** Exit codes: every statement holds; a statement is violated or undecided; bad usage or input. */
export const EXIT_SAFE = 0;
export const EXIT_UNSAFE = 1;
export const EXIT_INPUT_ERROR = 2;

/**
 * At most this many diagnostics are rendered in one run; the rest are counted in one closing line.
 * A generated policy can produce thousands of identical warnings, each with a code frame.
 */
export const MAX_RENDERED_DIAGNOSTICS = 100;

/** Thrown inside a command to stop with exit code 2 after the diagnostics were printed. */
export class InputError extends Error {}

/**
 * The stages are loaded when a command needs them: the parser generator, the schema library and
 * the solver take most of a second to load, which `explain`, `--help` and a usage error never
 * need, and `fmt` and `signature` need only one of.
 */
export const loadCompiler = () => import("@vigil/compiler");
export const loadTraceReader = () => import("@vigil/trace");
export const loadSyntax = () => import("@vigil/syntax");

/**
 * How a trace file is read: its format (or detection), whether shell calls are grounded, whether
 * messages are events, and which run of a file holding several.
 */
export interface TraceReading {
  readonly traceFormat?: "auto" | "jsonl" | "claude-code" | "agentdojo" | "openai" | "mcp" | "tau-bench";
  readonly ground?: boolean;
  readonly messages?: boolean;
  readonly run?: string;
}

/** `1 run`, `2 runs`: a count and its noun. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** Each rule of a compiled policy with its documentation and its declaration as written. */
export function ruleTexts(compiled: CompiledPolicy, source: string): RuleText[] {
  if (!compiled.ok) return [];
  return compiled.program.policies.flatMap((policy) =>
    policy.statements.map((statement) => ({
      id: ruleId(statement),
      ...(statement.doc !== undefined ? { doc: statement.doc } : {}),
      source: source.slice(statement.span.start, statement.span.end),
    })),
  );
}

/** A file's size, or 0 when it cannot be read (reading it then reports why). */
export async function fileSize(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

/** A JavaScript stack overflow: some stage recursed on deeply nested input. */
export function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

/** Writes a file a command produces (`-o OUT`, a report), making its folder first. */
export async function writeOutput(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, text);
}

/** Commander's parser of an option whose value is a positive integer (`--timeout`, `--budget`). */
export function parsePositiveInteger(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new InvalidArgumentError("must be a positive integer");
  return value;
}

/** Commander's parser of a TCP port (`serve --port`). */
export function parsePort(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0 || value > 65_535) throw new InvalidArgumentError("must be a port number (0 to 65535)");
  return value;
}

/** `--trace-format`, the same for every command that reads a trace. */
export function traceFormatOption(): Option {
  return new Option("--trace-format <format>", "the trace's format; auto detects it from the content")
    .choices(["auto", "jsonl", "claude-code", "agentdojo", "openai", "mcp", "tau-bench"])
    .default("auto");
}
