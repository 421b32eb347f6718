import { readFile, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { stripByteOrderMark } from "@vigil/diagnostics";

/**
 * `vigil.config.json`: where a folder of policies takes its sample traces and tool schemas from.
 *
 * ```json
 * { "traces": ["coding-agent/*.jsonl"], "schemas": ["tools.json"] }
 * ```
 *
 * `traces` are globs and `schemas` are files, both relative to the folder of the config file. The
 * config that applies to a policy is the one in its folder or the nearest ancestor folder, up to the
 * workspace folder that holds the policy. `folders` gives subfolders their own samples: a policy in
 * one of them (the innermost that holds it) is checked against that folder's traces and schemas,
 * relative to the folder, instead of the config's own.
 *
 * ```json
 * { "folders": { "dashcam": { "traces": ["*.jsonl"] }, "coding-agent": { "traces": ["*.jsonl"] } } }
 * ```
 *
 * `"messages": true` reads the sample traces with the conversation's messages as events
 * (`user_message`, `agent_message`, with their `text`), as `vigilc check --messages` does, so that
 * completion offers them and the lenses judge rules about them. A folder takes the config's value
 * unless it gives its own.
 */
export const configFileName = "vigil.config.json";

/** A set of sample traces and schemas, with the folder their paths are relative to. */
export interface SampleSection {
  readonly configFile: string;
  readonly directory: string;
  readonly traces: readonly string[];
  readonly schemas: readonly string[];
  /** Whether the traces are read with the conversation's messages as events (`"messages": true`). */
  readonly messages: boolean;
}

export interface VigilConfig {
  /** The config file. */
  readonly file: string;
  /** The folder of the config file. */
  readonly directory: string;
  /** The config's own traces and schemas first, then one section per entry of `folders`. */
  readonly sections: readonly SampleSection[];
  /** What is wrong with the file (it is still used as far as it can be read). */
  readonly problems: readonly string[];
}

/** Reads and validates a config file; never throws (a problem makes the config empty, with the reason). */
export async function readConfig(file: string): Promise<VigilConfig> {
  const directory = dirname(file);
  const empty = (problem: string): VigilConfig => ({ file, directory, sections: [{ configFile: file, directory, traces: [], schemas: [], messages: false }], problems: [problem] });
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    return empty(`cannot read ${configFileName}: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = JSON.parse(stripByteOrderMark(text));
  } catch (error) {
    return empty(`${configFileName} is not valid JSON: ${(error as Error).message}`);
  }
  if (!isObject(document)) return empty(`${configFileName} must be an object such as {"traces": ["*.jsonl"], "schemas": ["tools.json"]}`);
  const problems: string[] = [];
  const flag = (fields: Record<string, unknown>, where: string, inherited: boolean): boolean => {
    const value = fields["messages"];
    if (value === undefined) return inherited;
    if (typeof value !== "boolean") {
      problems.push(`"messages"${where} in ${configFileName} must be true or false`);
      return inherited;
    }
    return value;
  };
  const section = (fields: Record<string, unknown>, where: string, sectionDirectory: string, inherited = false): SampleSection => {
    const strings = (name: "traces" | "schemas"): string[] => {
      const value = fields[name];
      if (value === undefined) return [];
      if (!Array.isArray(value) || !value.every((entry) => typeof entry === "string")) {
        problems.push(`"${name}"${where} in ${configFileName} must be a list of strings`);
        return [];
      }
      return value as string[];
    };
    return { configFile: file, directory: sectionDirectory, traces: strings("traces"), schemas: strings("schemas"), messages: flag(fields, where, inherited) };
  };
  const sections = [section(document, "", directory)];
  const messages = sections[0]!.messages;
  const folders = document["folders"];
  if (folders !== undefined && !isObject(folders)) problems.push(`"folders" in ${configFileName} must be an object from folders to {"traces": […], "schemas": […]}`);
  else if (folders !== undefined) {
    for (const [folder, fields] of Object.entries(folders)) {
      if (!isObject(fields)) {
        problems.push(`"folders"."${folder}" in ${configFileName} must be an object such as {"traces": ["*.jsonl"]}`);
        continue;
      }
      for (const name of Object.keys(fields)) {
        if (name !== "traces" && name !== "schemas" && name !== "messages") problems.push(`"folders"."${folder}" in ${configFileName} has an unknown field "${name}" (known: "traces", "schemas", "messages")`);
      }
      sections.push(section(fields, ` of "folders"."${folder}"`, resolve(directory, folder), messages));
    }
  }
  for (const name of Object.keys(document)) {
    if (name !== "traces" && name !== "schemas" && name !== "folders" && name !== "messages") problems.push(`${configFileName} has an unknown field "${name}" (known: "traces", "schemas", "folders", "messages")`);
  }
  return { file, directory, sections, problems };
}

/** The section that applies to a policy file: the innermost folder holding it, else the config's own. */
export function sectionFor(config: VigilConfig, policyFile: string): SampleSection {
  let best = config.sections[0]!;
  for (const section of config.sections.slice(1)) {
    const inside = relative(section.directory, resolve(policyFile));
    if (!inside.startsWith("..") && !isAbsolute(inside) && section.directory.length >= best.directory.length) best = section;
  }
  return best;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
