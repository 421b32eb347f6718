import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { canonicalEvent, signatureToJson, type Signature, type TraceEvent } from "@vigil/compiler";
import type { DraftResult } from "./draft.js";
import type { GuardrailResult } from "./incident.js";
import type { SpecSource } from "./spec.js";
import type { Vocabulary } from "./vocabulary.js";

/**
 * Drafts kept on disk, so that the same draft asked for again makes no request (the paper's
 * Compile is 92.5% of its end-to-end time). The key is everything the answer depends on: the
 * specification's text, the signature and the vocabulary per action, the provider and model, the
 * prompt's version and the language reference, the policy's name and the repair rounds allowed.
 * Guardrails are kept the same way, keyed by the broken rule, the incident and the benign runs
 * they were checked on.
 */

export interface DraftKeyParts {
  readonly promptVersion: string;
  readonly reference: string;
  readonly provider: string;
  readonly model: string;
  readonly policyName: string;
  readonly maxRepairs: number;
  readonly sources: readonly SpecSource[];
  readonly signature?: Signature;
  /** The runs' vocabulary per action, as the model is shown it. */
  readonly vocabulary?: Vocabulary;
}

export function draftKey(parts: DraftKeyParts): string {
  const material = {
    prompt: parts.promptVersion,
    reference: sha256(parts.reference),
    provider: parts.provider,
    model: parts.model,
    policy: parts.policyName,
    repairs: parts.maxRepairs,
    sources: parts.sources.map((source) => [source.name, source.lines.map((line) => `${line.number}:${line.text}`)]),
    signature: parts.signature === undefined ? null : signatureToJson(parts.signature),
    vocabulary: parts.vocabulary === undefined ? null : sha256(JSON.stringify(parts.vocabulary)),
  };
  return sha256(JSON.stringify(material));
}

export interface GuardrailKeyParts {
  readonly promptVersion: string;
  readonly reference: string;
  readonly provider: string;
  readonly model: string;
  readonly maxRepairs: number;
  /** The broken rule, as written. */
  readonly ruleText: string;
  readonly incident: { readonly name: string; readonly events: readonly TraceEvent[] };
  readonly benign: readonly { readonly name: string; readonly events: readonly TraceEvent[] }[];
  readonly signature?: Signature;
}

export function guardrailKey(parts: GuardrailKeyParts): string {
  const run = (r: GuardrailKeyParts["incident"]) => [r.name, r.events.map(canonicalEvent)];
  const material = {
    kind: "guardrail",
    prompt: parts.promptVersion,
    reference: sha256(parts.reference),
    provider: parts.provider,
    model: parts.model,
    repairs: parts.maxRepairs,
    rule: parts.ruleText,
    incident: run(parts.incident),
    benign: parts.benign.map(run),
    signature: parts.signature === undefined ? null : signatureToJson(parts.signature),
  };
  return sha256(JSON.stringify(material));
}

/** The folder drafts are kept in: `VIGIL_CACHE_DIR/drafts`, else `$XDG_CACHE_HOME/vigil/drafts`, else `~/.cache/vigil/drafts`. */
export function defaultCacheFolder(env: Readonly<Record<string, string | undefined>>): string {
  if (env["VIGIL_CACHE_DIR"]) return join(env["VIGIL_CACHE_DIR"], "drafts");
  return join(env["XDG_CACHE_HOME"] || join(homedir(), ".cache"), "vigil", "drafts");
}

export class DraftCache {
  constructor(readonly folder: string) {}

  /** The kept draft of a key; undefined when there is none (or it cannot be read). */
  async get(key: string): Promise<DraftResult | undefined> {
    return this.read<DraftResult>(key, "draft");
  }

  /** Keeps a draft; written whole or not at all (a temporary file renamed). */
  async set(key: string, draft: DraftResult): Promise<void> {
    await this.write(key, "draft", draft);
  }

  /** The kept guardrail of a key (`guardrailKey`); undefined when there is none. */
  async getGuardrail(key: string): Promise<GuardrailResult | undefined> {
    return this.read<GuardrailResult>(key, "guardrail");
  }

  async setGuardrail(key: string, guardrail: GuardrailResult): Promise<void> {
    await this.write(key, "guardrail", guardrail);
  }

  /** A kept value of the right shape, or undefined: a file that is torn, edited or of another kind is not one. */
  private async read<T>(key: string, kind: "draft" | "guardrail"): Promise<T | undefined> {
    try {
      const kept = JSON.parse(await readFile(this.path(key), "utf8")) as { key?: unknown } & Record<string, unknown>;
      const value = kept[kind] as Record<string, unknown> | undefined;
      if (kept.key !== key || typeof value !== "object" || value === null) return undefined;
      const strings = kind === "draft" ? ["policy", "provider", "model"] : ["policy", "rule", "broken", "refusedAction", "provider", "model"];
      const numbers = kind === "draft" ? ["rounds"] : ["witness", "refusesAt", "benignRuns", "benignCalls", "rounds"];
      const lists = kind === "draft" ? ["rules", "unsupported", "rejected", "warnings"] : [];
      const shaped = strings.every((name) => typeof value[name] === "string") && numbers.every((name) => typeof value[name] === "number") && lists.every((name) => Array.isArray(value[name]));
      if (!shaped) return undefined;
      if (kind === "draft") {
        const entries = (name: string, fields: readonly string[]) => (value[name] as unknown[]).every((entry) => typeof entry === "object" && entry !== null && fields.every((field) => typeof (entry as Record<string, unknown>)[field] === "string"));
        const problems = (value["rejected"] as { problems?: unknown }[]).every((entry) => Array.isArray(entry?.problems) && entry.problems.every((problem) => typeof problem === "string"));
        const drafted = entries("rules", ["policy", "name", "requirement", "source", "cited"]) && entries("unsupported", ["source", "requirement", "why"]) && entries("rejected", ["name"]) && problems;
        if (!drafted || !(value["warnings"] as unknown[]).every((warning) => typeof warning === "string")) return undefined;
        const reviews = value["reviews"];
        if (reviews !== undefined && !(Array.isArray(reviews) && entries("reviews", ["name", "review"]))) return undefined;
      }
      return value as T;
    } catch {
      return undefined;
    }
  }

  private async write(key: string, kind: "draft" | "guardrail", value: DraftResult | GuardrailResult): Promise<void> {
    await mkdir(this.folder, { recursive: true, mode: 0o700 });
    const temporary = `${this.path(key)}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(temporary, `${JSON.stringify({ key, [kind]: value })}\n`, { mode: 0o600 });
    await rename(temporary, this.path(key));
  }

  private path(key: string): string {
    return join(this.folder, `${key}.json`);
  }
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
