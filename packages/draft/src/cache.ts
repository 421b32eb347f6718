import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { signatureToJson, type Signature } from "@vigil/compiler";
import type { DraftResult } from "./draft.js";
import type { SpecSource } from "./spec.js";

/**
 * Drafts kept on disk, so that the same draft asked for again makes no request (the paper's
 * Compile is 92.5% of its end-to-end time). The key is everything the answer depends on: the
 * specification's text, the signature's vocabulary, the provider and model, the prompt's version
 * and the language reference, the policy's name and the repair rounds allowed.
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
    try {
      const kept = JSON.parse(await readFile(this.path(key), "utf8")) as { key?: string; draft?: DraftResult };
      return kept.key === key && typeof kept.draft?.policy === "string" ? kept.draft : undefined;
    } catch {
      return undefined;
    }
  }

  /** Keeps a draft; written whole or not at all (a temporary file renamed). */
  async set(key: string, draft: DraftResult): Promise<void> {
    await mkdir(this.folder, { recursive: true, mode: 0o700 });
    const temporary = `${this.path(key)}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(temporary, `${JSON.stringify({ key, draft })}\n`, { mode: 0o600 });
    await rename(temporary, this.path(key));
  }

  private path(key: string): string {
    return join(this.folder, `${key}.json`);
  }
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
