import { isJsonObject } from "../value.js";
import { looksLikeAgentDojo, looksLikeChatMessages } from "./agentdojo.js";
import { eachJsonLine } from "./calls.js";
import { looksLikeClaudeCode } from "./claude-code.js";
import { looksLikeMcp } from "./mcp.js";
import { looksLikeTauBenchFile, looksLikeTauBenchRun } from "./tau-bench.js";

/** The trace formats `vigilc` reads; `auto` picks one from the content. */
export const traceFormats = ["jsonl", "claude-code", "agentdojo", "openai", "mcp", "tau-bench"] as const;
export type TraceFormat = (typeof traceFormats)[number];

export const traceFormatDescriptions: Readonly<Record<TraceFormat, string>> = {
  jsonl: "canonical Vigil events, JSON Lines or a JSON array",
  "claude-code": "Claude Code transcripts (stream-json output or session files)",
  agentdojo: "AgentDojo run files",
  openai: "OpenAI chat messages with tool_calls, or Responses API items",
  mcp: "MCP JSON-RPC logs (tools/call requests and their responses)",
  "tau-bench": "τ-bench runs: a file of runs ({task_id, trial, traj}) is a corpus of its runs; one run object is one run",
};

/** What each line-oriented format reads, and how, in words. */
const lineFormatRecords: Readonly<Record<string, string>> = { "claude-code": "Claude Code transcript records", mcp: "MCP JSON-RPC messages", jsonl: "Vigil events" };
const lineFormatShapes: Readonly<Record<string, string>> = { "claude-code": "one per line", mcp: "one per line", jsonl: "one per line or as a JSON array" };

/**
 * Why a requested format cannot be the text's, when that is plain before reading it: a document
 * spread over lines where a format wants one record per line (which would otherwise give an error
 * per line), or records of which none is the format's (which would otherwise read as an empty
 * trace and pass every prohibition). Undefined when the text may be of the format.
 */
export function formatMismatch(text: string, format: TraceFormat): string | undefined {
  if (format !== "claude-code" && format !== "mcp" && format !== "jsonl") return undefined;
  const looksLike = format === "claude-code" ? looksLikeClaudeCode : format === "mcp" ? looksLikeMcp : undefined;
  // Lines are parsed only until the question is settled: usually the first line settles it.
  let first = true;
  let parsedAny = false;
  for (const record of eachJsonLine(text)) {
    if (first && record.error !== undefined) {
      first = false;
      const lines = text.split("\n").filter((line) => line.trim() !== "").length;
      if (lines < 2) return undefined;
      let whole: unknown;
      try {
        whole = JSON.parse(text);
      } catch {
        return undefined; // Malformed lines: the reader reports each where it is.
      }
      if (format === "jsonl" && Array.isArray(whole)) return undefined; // A JSON array of events.
      return `the trace is one JSON document over ${lines} lines; \`${format}\` reads ${lineFormatRecords[format]}, ${lineFormatShapes[format]}`;
    }
    first = false;
    // Canonical events are each checked as events, with their lines, by the reader.
    if (looksLike === undefined) return undefined;
    if (record.error !== undefined) continue;
    if (looksLike(record.value)) return undefined;
    parsedAny = true;
  }
  return parsedAny ? `no line of the trace is one of the ${lineFormatRecords[format]} that \`${format}\` reads` : undefined;
}

/** Picks the format from the content: the shape of the whole document, or of its first records. */
export function detectTraceFormat(text: string): TraceFormat | undefined {
  const trimmed = text.trimStart();
  if (trimmed === "") return "jsonl";
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    let whole: unknown;
    let parsed = false;
    try {
      whole = JSON.parse(text);
      parsed = true;
    } catch {
      // Not one JSON document: JSON Lines, or truncated.
    }
    if (parsed) {
      const format = documentFormat(whole);
      if (format !== "lines") return format;
    }
  }
  // JSON Lines: decide on the first records that parse (only the first 20 are parsed).
  let seen = 0;
  for (const record of eachJsonLine(text)) {
    if (++seen > 20) break;
    if (record.error !== undefined) continue;
    if (looksLikeClaudeCode(record.value)) return "claude-code";
    if (looksLikeMcp(record.value)) return "mcp";
    if (isJsonObject(record.value) && typeof record.value["action"] === "string") return "jsonl";
  }
  // Malformed (a truncated document, say): guess from its beginning, so that the reader of that
  // format reports where it breaks.
  const head = text.slice(0, 4096);
  if (trimmed.startsWith("[")) return /^\s*\[\s*\{/.test(head) && /"(?:traj|task_id)"\s*:/.test(head) ? "tau-bench" : /"role"\s*:/.test(head) ? "openai" : "jsonl";
  if (/"suite_name"|"pipeline_name"/.test(head)) return "agentdojo";
  if (/^\s*\{/.test(head) && /"traj"\s*:\s*\[/.test(head)) return "tau-bench";
  if (/^\s*\{\s*"action"/.test(text)) return "jsonl";
  if (/^\s*\{\s*"type"\s*:\s*"(?:system|assistant|user|result|summary)"/.test(text)) return "claude-code";
  if (/^\s*\{\s*"jsonrpc"\s*:/.test(text)) return "mcp";
  return undefined;
}

/**
 * The format of a text that is one JSON document, by the document's shape; `lines` when the
 * document is a single record line, which is read as JSON Lines like any other.
 */
export function documentFormat(whole: unknown): TraceFormat | undefined | "lines" {
  if (looksLikeAgentDojo(whole)) return "agentdojo";
  if (looksLikeTauBenchRun(whole) || looksLikeTauBenchFile(whole)) return "tau-bench";
  if (Array.isArray(whole) && whole.length > 0 && isJsonObject(whole[0]) && typeof whole[0]["action"] === "string") return "jsonl";
  if (Array.isArray(whole) && whole.length === 0) return "jsonl";
  if (looksLikeChatMessages(whole)) return "openai";
  if (!Array.isArray(whole) && !isRecordLine(whole)) return undefined;
  return "lines";
}

export function isRecordLine(value: unknown): boolean {
  return looksLikeClaudeCode(value) || looksLikeMcp(value) || (isJsonObject(value) && typeof value["action"] === "string");
}
