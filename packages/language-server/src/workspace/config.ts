import { readFile, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";

/**
 * `vigil.config.json`: where a folder of policies takes its sample traces and tool schemas from.
 *
 * ```json
 * { "traces": ["coding-agent/*.jsonl"], "schemas": ["tools.json"] }
 * ```
 *
 * `traces` are globs and `schemas` are files, both relative to the folder of the config file. The
 * config that applies to a policy is the one in its folder or the nearest ancestor folder, up to the
 * workspace folder that holds the policy.
 */
export const configFileName = "vigil.config.json";

export interface VigilConfig {
  /** The config file. */
  readonly file: string;
  /** The folder paths in the config are relative to. */
  readonly directory: string;
  readonly traces: readonly string[];
  readonly schemas: readonly string[];
  /** What is wrong with the file (it is still used as far as it can be read). */
  readonly problems: readonly string[];
}

/** Reads and validates a config file; never throws (a problem makes the config empty, with the reason). */
export async function readConfig(file: string): Promise<VigilConfig> {
  const directory = dirname(file);
  const empty = (problem: string): VigilConfig => ({ file, directory, traces: [], schemas: [], problems: [problem] });
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    return empty(`cannot read ${configFileName}: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    return empty(`${configFileName} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    return empty(`${configFileName} must be an object such as {"traces": ["*.jsonl"], "schemas": ["tools.json"]}`);
  }
  const problems: string[] = [];
  const fields = document as Record<string, unknown>;
  const strings = (name: "traces" | "schemas"): string[] => {
    const value = fields[name];
    if (value === undefined) return [];
    if (!Array.isArray(value) || !value.every((entry) => typeof entry === "string")) {
      problems.push(`"${name}" in ${configFileName} must be a list of strings`);
      return [];
    }
    return value as string[];
  };
  const traces = strings("traces");
  const schemas = strings("schemas");
  for (const name of Object.keys(fields)) {
    if (name !== "traces" && name !== "schemas") problems.push(`${configFileName} has an unknown field "${name}" (known: "traces", "schemas")`);
  }
  return { file, directory, traces, schemas, problems };
}

/**
 * The config file that applies to a policy file: the nearest `vigil.config.json` in its folder or
 * an ancestor, not above `root` (the workspace folder holding the policy) when there is one.
 */
export async function findConfigFile(policyFile: string, root: string | undefined): Promise<string | undefined> {
  const stop = root === undefined ? undefined : resolve(root);
  let directory = dirname(resolve(policyFile));
  for (;;) {
    const candidate = join(directory, configFileName);
    if (await isFile(candidate)) return candidate;
    if (stop !== undefined && directory === stop) return undefined;
    const parent = dirname(directory);
    if (parent === directory) return undefined;
    directory = parent;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
