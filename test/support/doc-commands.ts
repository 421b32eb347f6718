import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The `vigilc` commands the documentation shows (README.md and docs/*.md), with the output the text
 * shows for each: read by test/docs-commands.test.ts, which runs them with the built CLI.
 *
 * A command is found
 * - on a line of a shell code block (```sh, ```bash, ```console, ```shell or an unlabelled block)
 *   that starts with `$ `, `npx vigilc` or `vigilc`, or runs `vigilc` after `&&`, `|` or `--`
 *   (`npm ci && npx vigilc …`, `runuser -u U -- vigilc …`); a line ending in `\` goes on;
 * - in a paragraph that starts with an inline `vigilc …` code span and says it "exits N and prints:"
 *   (the output block after the paragraph).
 *
 * Its shown output: in a `$ ` block, the lines up to the next `$ ` line; after a block holding one
 * command, a block that follows it directly (nothing but blank lines between); after an inline
 * command, the block that ends its paragraph. Its shown exit code: a `# exit N` / `# exits N`
 * comment on the command's line, or "exits N" in its paragraph.
 */

export interface DocCommand {
  /** The documentation file, relative to the repository root. */
  file: string;
  /** 1-based line of the command in that file. */
  line: number;
  /** The command as the text shows it (from `vigilc` on, comments and continuations joined). */
  shown: string;
  /** The shell words after `vigilc`, redirections taken out. */
  args: string[];
  /** `> FILE`: the command's standard output goes to this file. */
  redirect?: string;
  /** The folder the text says it is run in (`run in \`DIR\``), relative to the root. */
  runIn?: string;
  /** With "run in `DIR` with relative paths": the command as run there drops the `DIR/` prefix. */
  relativeTo?: string;
  expectedExit?: number;
  /** The lines of output the text shows, and the line of the documentation they start at. */
  output?: { lines: string[]; line: number };
}

interface Block {
  lang: string;
  /** 1-based line of the opening fence. */
  open: number;
  /** 1-based line of the closing fence. */
  close: number;
  /** The block's lines, with their 1-based line numbers. */
  lines: { text: string; line: number }[];
}

const SHELL_LANGS = new Set(["sh", "bash", "console", "shell", "shell-session", ""]);
const OUTPUT_LANGS = new Set(["", "text", "console", "json", "sql", "xml"]);

export function documentationFiles(root: string): string[] {
  return ["README.md", ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).sort().map((name) => `docs/${name}`)];
}

function blocksOf(lines: string[]): Block[] {
  const blocks: Block[] = [];
  let current: Block | undefined;
  let indent = "";
  lines.forEach((text, index) => {
    const fence = /^(\s*)```\s*([\w-]*)\s*$/.exec(text);
    if (current === undefined) {
      if (fence !== null) {
        indent = fence[1]!;
        current = { lang: fence[2]!.toLowerCase(), open: index + 1, close: index + 1, lines: [] };
      }
    } else if (fence !== null && fence[2] === "") {
      current.close = index + 1;
      blocks.push(current);
      current = undefined;
    } else {
      current.lines.push({ text: text.startsWith(indent) ? text.slice(indent.length) : text, line: index + 1 });
    }
  });
  return blocks;
}

/** Shell words of a command line: quotes and backslashes as a POSIX shell reads them, `#` comments cut. */
export function shellWords(text: string): { words: string[]; comment: string } {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      word += text.slice(i + 1, end < 0 ? text.length : end);
      i = end < 0 ? text.length : end;
      inWord = true;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\" && j + 1 < text.length) j++;
        word += text[j];
      }
      i = j;
      inWord = true;
    } else if (c === "\\" && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else if (c === "#" && !inWord) {
      return { words, comment: text.slice(i + 1).trim() };
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return { words, comment: "" };
}

function parseCommand(text: string): Pick<DocCommand, "shown" | "args" | "redirect" | "expectedExit"> | undefined {
  const start = /(?:^|&&\s*|\|\s*|\s--\s+)(?:npx\s+)?vigilc(?:\s|$)/.exec(text);
  if (start === null) return undefined;
  const from = text.slice(start.index).replace(/^(?:&&|\||\s--)\s*/, "");
  const { words, comment } = shellWords(from);
  const exit = /\bexits?\s+(\d)\b/.exec(comment);
  let index = words.indexOf("vigilc");
  const args = words.slice(index + 1);
  let redirect: string | undefined;
  const at = args.findIndex((word) => word === ">" || (word.startsWith(">") && word.length > 1));
  if (at >= 0) {
    redirect = args[at] === ">" ? args[at + 1] : args[at]!.slice(1);
    args.splice(at, args[at] === ">" ? 2 : 1);
  }
  const shown = comment === "" ? from.trim() : from.slice(0, from.lastIndexOf("#")).trim();
  return { shown: shown.replace(/^npx\s+/, ""), args, ...(redirect === undefined ? {} : { redirect }), ...(exit === null ? {} : { expectedExit: Number(exit[1]) }) };
}

/** The commands of one documentation file. */
export function commandsOf(root: string, file: string): DocCommand[] {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const blocks = blocksOf(lines);
  const commands: DocCommand[] = [];
  const nextBlockDirectlyAfter = (line: number): Block | undefined => {
    let next = line; // 1-based line of the closing fence; lines[next] is the line after it
    while (next < lines.length && lines[next]!.trim() === "") next++;
    const block = blocks.find((b) => b.open === next + 1);
    return block !== undefined && OUTPUT_LANGS.has(block.lang) ? block : undefined;
  };

  for (const block of blocks) {
    if (!SHELL_LANGS.has(block.lang)) continue;
    const found: DocCommand[] = [];
    let dollar = false;
    for (let i = 0; i < block.lines.length; i++) {
      const first = block.lines[i]!;
      let text = first.text.trim();
      const isDollar = text.startsWith("$ ");
      if (isDollar) text = text.slice(2);
      if (!(isDollar || /^(?:npx\s+)?vigilc(?:\s|$)/.test(text) || /(?:&&|\||\s--)\s*(?:npx\s+)?vigilc\s/.test(text))) {
        if (dollar && found.length > 0) found.at(-1)!.output!.lines.push(first.text);
        continue;
      }
      while (text.endsWith("\\") && i + 1 < block.lines.length) text = text.slice(0, -1) + " " + block.lines[++i]!.text.trim();
      const parsed = parseCommand(text);
      if (parsed === undefined) continue;
      dollar ||= isDollar;
      found.push({ file, line: first.line, ...parsed, ...(isDollar ? { output: { lines: [], line: first.line + 1 } } : {}) });
    }
    if (found.length === 1 && !dollar) {
      const after = nextBlockDirectlyAfter(block.close);
      if (after !== undefined) found[0]!.output = { lines: after.lines.map((l) => l.text), line: after.open + 1 };
    }
    commands.push(...found);
  }

  // Inline: a paragraph that starts with `vigilc …` and says what it exits with and prints.
  lines.forEach((text, index) => {
    if (index > 0 && lines[index - 1]!.trim() !== "") return;
    const inline = /^`((?:npx\s+)?vigilc\s[^`]+)`/.exec(text);
    if (inline === null) return;
    let end = index;
    while (end + 1 < lines.length && lines[end + 1]!.trim() !== "") end++;
    const paragraph = lines.slice(index, end + 1).join(" ");
    const exit = /\bexits\s+(\d)\s+and\s+prints:/.exec(paragraph);
    if (exit === null) return;
    const parsed = parseCommand(inline[1]!)!;
    const runIn = /run in\s+`([^`]+)`(\s+with relative paths)?/.exec(paragraph);
    const output = nextBlockDirectlyAfter(end + 1);
    commands.push({
      file,
      line: index + 1,
      ...parsed,
      expectedExit: Number(exit[1]),
      ...(runIn === null ? {} : { runIn: runIn[1]!, ...(runIn[2] === undefined ? {} : { relativeTo: runIn[1]! }) }),
      ...(output === undefined ? {} : { output: { lines: output.lines.map((l) => l.text), line: output.open + 1 } }),
    });
  });
  return commands.sort((a, b) => a.line - b.line);
}

export function documentedCommands(root: string): DocCommand[] {
  return documentationFiles(root).flatMap((file) => commandsOf(root, file));
}

/** The positional words of a command that look like files (a path or a name with an extension). */
function fileWords(args: string[]): string[] {
  return args.filter((word) => !word.startsWith("-") && /[/.]/.test(word) && !/[*?]/.test(word));
}

/**
 * Where to run a command, relative to the root, and its words as run there: the folder the text
 * names; else the root if its files are there; else the one folder of examples/ or of the CLI's test
 * fixtures that holds them all (a doc that says `dashcam.vigil` of the dashcam example, or
 * `release.vigil` of the analysis fixtures, docs/analysis.md).
 */
export function placeOf(root: string, command: DocCommand): { cwd: string; args: string[] } {
  if (command.runIn !== undefined) {
    const prefix = command.relativeTo === undefined ? undefined : command.relativeTo.replace(/\/?$/, "/");
    return { cwd: command.runIn, args: prefix === undefined ? command.args : command.args.map((w) => (w.startsWith(prefix) ? w.slice(prefix.length) : w)) };
  }
  const files = fileWords(command.args).filter((w) => !/^\.\.?\/?$/.test(w));
  const inputs = files.filter((w) => existsSync(join(root, w)) || !/\.(html|sarif|parquet|xml|sql)$/.test(w));
  if (inputs.every((w) => existsSync(join(root, w)))) return { cwd: ".", args: command.args };
  const folders = ["examples", "packages/cli/test/fixtures"].flatMap((parent) =>
    readdirSync(join(root, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${parent}/${entry.name}`),
  );
  const holding = folders.filter((folder) => inputs.every((w) => existsSync(join(root, folder, w))));
  return { cwd: holding.length === 1 ? holding[0]! : ".", args: command.args };
}

/** Whitespace collapsed to single spaces, ends trimmed. */
export function normalise(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * The shown lines missing from the output: each line (cut at `…` / `...` elisions into pieces)
 * must be found, whitespace normalised, in order, in stdout or in stderr (each read in order).
 */
export function missingLines(shown: string[], stdout: string, stderr: string): string[] {
  const streams = [normalise(stdout), normalise(stderr)];
  const cursors = [0, 0];
  const missing: string[] = [];
  for (const line of shown) {
    const pieces = line
      .split(/…|\.\.\./)
      .map(normalise)
      .filter((piece) => piece !== "");
    if (pieces.length === 0) continue;
    let found = false;
    for (let s = 0; s < streams.length && !found; s++) {
      let cursor = cursors[s]!;
      let all = true;
      for (const piece of pieces) {
        const at = streams[s]!.indexOf(piece, cursor);
        if (at < 0) {
          all = false;
          break;
        }
        cursor = at + piece.length;
      }
      if (all) {
        cursors[s] = cursor;
        found = true;
      }
    }
    if (!found) missing.push(line);
  }
  return missing;
}
