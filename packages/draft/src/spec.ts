import { readFile, realpath, stat } from "node:fs/promises";
import { dirname, extname, isAbsolute, relative, resolve, sep } from "node:path";

/**
 * The specifications a policy is drafted from: a skill's SKILL.md and the files it references, a
 * section of a README (`README.md#Heading`), or any text. Each keeps its lines as they are in the
 * file, so that a rule can cite the place it came from (`SKILL.md:12`) and the citation can be
 * checked.
 */

export interface SpecSource {
  /** How rules cite it: the path as given (or as SKILL.md names it), forward slashes. */
  readonly name: string;
  /** The lines, each with its line number in the file. */
  readonly lines: readonly { readonly number: number; readonly text: string }[];
}

export interface SpecReading {
  readonly sources: readonly SpecSource[];
  /** Why a specification, or a file it references, was left out; an error stops the draft. */
  readonly errors: readonly string[];
  readonly notes: readonly string[];
}

/** At most this much text is read from all specifications together. */
export const specificationBudget = 512 * 1024;
/** A SKILL.md's references followed, at most. */
const maxReferences = 20;
const textExtensions = new Set([".md", ".markdown", ".txt", ".rst", ".yaml", ".yml", ".json", ".toml"]);

/**
 * Reads the specifications named on the command line (relative to `cwd`). A file named
 * `SKILL.md` brings the text files it links to or names in backticks, inside its own folder.
 */
export async function readSpecifications(paths: readonly string[], options: { readonly cwd?: string } = {}): Promise<SpecReading> {
  const cwd = options.cwd ?? process.cwd();
  const sources: SpecSource[] = [];
  const errors: string[] = [];
  const notes: string[] = [];
  const seen = new Set<string>();
  let budget = specificationBudget;
  const take = async (name: string, file: string, section: string | undefined): Promise<string | undefined> => {
    let text: string;
    try {
      const info = await stat(file);
      if (!info.isFile()) {
        errors.push(`${name}: not a regular file`);
        return undefined;
      }
      if (info.size > budget) {
        errors.push(`${name}: ${info.size} bytes is more than the ${specificationBudget / 1024} KiB the specifications may take together`);
        return undefined;
      }
      text = await readFile(file, "utf8");
    } catch (error) {
      errors.push(`${name}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
      return undefined;
    }
    budget -= text.length;
    const all = text.split(/\r?\n/).map((line, index) => ({ number: index + 1, text: line }));
    const lines = section === undefined ? all : sectionOf(all, section);
    if (lines === undefined) {
      errors.push(`${name}: no heading \`${section}\``);
      return undefined;
    }
    sources.push({ name: section === undefined ? name : `${name}#${section}`, lines });
    return text;
  };
  for (const given of paths) {
    const hash = given.lastIndexOf("#");
    const [path, section] = hash > 0 ? [given.slice(0, hash), given.slice(hash + 1)] : [given, undefined];
    const file = resolve(cwd, path);
    const name = displayName(cwd, file);
    if (seen.has(`${file}#${section ?? ""}`)) continue;
    seen.add(`${file}#${section ?? ""}`);
    const text = await take(name, file, section);
    if (text === undefined || !/^skill\.md$/i.test(file.slice(file.lastIndexOf(sep) + 1))) continue;
    // A skill's references: the files it links to or names, inside the skill's folder.
    const folder = await realpath(dirname(file)).catch(() => dirname(file));
    let followed = 0;
    for (const reference of referencesOf(text)) {
      const target = resolve(dirname(file), reference);
      const real = await realpath(target).catch(() => undefined);
      if (real === undefined || seen.has(`${real}#`)) continue;
      if (!(real === folder || real.startsWith(folder + sep))) {
        notes.push(`${name} references \`${reference}\`, outside the skill's folder: not read`);
        continue;
      }
      if (!textExtensions.has(extname(real).toLowerCase())) continue;
      if (followed === maxReferences) {
        notes.push(`${name} references more than ${maxReferences} files: the rest are not read`);
        break;
      }
      followed++;
      seen.add(`${real}#`);
      await take(displayName(cwd, target), target, undefined);
    }
  }
  return { sources, errors, notes };
}

/** The relative paths a markdown text links to (`[x](path)`) or names in backticks (`` `dir/file.md` ``). */
export function referencesOf(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(/\]\(\s*<?([^)\s>#]+)(?:#[^)\s]*)?>?(?:\s+"[^"]*")?\s*\)/g)) found.add(match[1]!);
  for (const match of text.matchAll(/`([\w./-]+\.(?:md|markdown|txt|rst|ya?ml|json|toml))`/g)) found.add(match[1]!);
  return [...found].filter((path) => !/^[a-z][a-z0-9+.-]*:/i.test(path) && !isAbsolute(path));
}

/** The lines of the section under a markdown heading: from it to the next heading of its level or higher. */
function sectionOf(lines: readonly { number: number; text: string }[], heading: string): { number: number; text: string }[] | undefined {
  const wanted = normalise(heading);
  let start = -1;
  let level = 0;
  let fence = false;
  for (let index = 0; index < lines.length; index++) {
    const text = lines[index]!.text;
    if (/^\s*(```|~~~)/.test(text)) fence = !fence;
    if (fence) continue;
    const match = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(text);
    if (match === null) continue;
    if (start >= 0 && match[1]!.length <= level) return lines.slice(start, index);
    if (start < 0 && (normalise(match[2]!) === wanted || slug(match[2]!) === wanted)) {
      start = index;
      level = match[1]!.length;
    }
  }
  return start >= 0 ? lines.slice(start) : undefined;
}

function normalise(heading: string): string {
  return heading.trim().toLowerCase();
}

/** A heading as a link anchor (GitHub's way): lower case, spaces to hyphens, punctuation dropped. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

function displayName(cwd: string, file: string): string {
  // Relative to the working directory even outside it (`../shared/spec.md`), so that a citation in a
  // recorded answer names the same file on another machine run from the same place.
  const path = relative(cwd, file);
  return (isAbsolute(path) ? file : path).split(sep).join("/");
}

/** The specifications as the model reads them: each line prefixed with its citation, `NAME:LINE| `. */
export function numberedText(sources: readonly SpecSource[]): string {
  return sources
    .map((source) => {
      const name = source.name.replace(/#.*$/, "");
      return `=== ${source.name} ===\n${source.lines.map((line) => `${name}:${line.number}| ${line.text}`).join("\n")}`;
    })
    .join("\n\n");
}

/** Whether `NAME:LINE` (or `NAME:FIRST-LAST`) names lines of the specifications, and the text there. */
export function citedText(sources: readonly SpecSource[], citation: string): string | undefined {
  const match = /^(.+?):(\d+)(?:\s*[-–]\s*(\d+))?$/.exec(citation.trim());
  if (match === null) return undefined;
  const [name, first, last] = [match[1]!, Number(match[2]), Number(match[3] ?? match[2])];
  const lines = sources.filter((source) => source.name.replace(/#.*$/, "") === name).flatMap((source) => source.lines);
  const cited = lines.filter((line) => line.number >= first && line.number <= last);
  if (cited.length === 0 || last < first) return undefined;
  return cited.map((line) => line.text).join("\n");
}
