import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The commands of Vigil's two programs, `vigilc` and `vigil-language-server`, that the documentation
 * shows (README.md and docs/*.md), with the output the text shows for each: read by
 * test/docs-commands.test.ts, which runs them with the built programs.
 *
 * A command is found
 * - on a line of a shell code block (```sh, ```bash, ```console, ```shell or an unlabelled block)
 *   that starts with `$ `, `npx PROGRAM` or `PROGRAM`, or runs the program after `&&`, `|` or `--`
 *   (`npm ci && npx vigilc …`, `runuser -u U -- vigilc …`); a line ending in `\` goes on;
 * - in a paragraph that starts with an inline `vigilc …` code span and says it "exits N and prints:"
 *   (the output block after the paragraph).
 *
 * Its shown output: in a `$ ` block, the lines up to the next `$ ` line; after a block holding one
 * command, a block that follows it directly (nothing but blank lines between); after an inline
 * command, the block that ends its paragraph. Its shown exit code: a `# exit N` / `# exits N`
 * comment on the command's line, or "exits N" in its paragraph.
 */

/** Vigil's programs, as the documentation names them. */
export const PROGRAMS = ["vigilc", "vigil-language-server"] as const;
export type Program = (typeof PROGRAMS)[number];
const PROGRAM = `(?:${PROGRAMS.join("|")})`;

export interface DocCommand {
  /** The documentation file, relative to the repository root. */
  file: string;
  /** 1-based line of the command in that file. */
  line: number;
  /** The program the command runs. */
  program: Program;
  /** The command as the text shows it (from the program's name on, comments and continuations joined). */
  shown: string;
  /** The shell words after the program's name, redirections taken out. */
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

function parseCommand(text: string): Pick<DocCommand, "program" | "shown" | "args" | "redirect" | "expectedExit"> | undefined {
  const start = new RegExp(`(?:^|&&\\s*|\\|\\s*|\\s--\\s+)(?:npx\\s+)?${PROGRAM}(?:\\s|$)`).exec(text);
  if (start === null) return undefined;
  const from = text.slice(start.index).replace(/^(?:&&|\||\s--)\s*/, "");
  const { words, comment } = shellWords(from);
  const exit = /\bexits?\s+(\d)\b/.exec(comment);
  const index = words.findIndex((word) => (PROGRAMS as readonly string[]).includes(word));
  const program = words[index] as Program;
  const args = words.slice(index + 1);
  let redirect: string | undefined;
  const at = args.findIndex((word) => word === ">" || (word.startsWith(">") && word.length > 1));
  if (at >= 0) {
    redirect = args[at] === ">" ? args[at + 1] : args[at]!.slice(1);
    args.splice(at, args[at] === ">" ? 2 : 1);
  }
  const shown = comment === "" ? from.trim() : from.slice(0, from.lastIndexOf("#")).trim();
  return { program, shown: shown.replace(/^npx\s+/, ""), args, ...(redirect === undefined ? {} : { redirect }), ...(exit === null ? {} : { expectedExit: Number(exit[1]) }) };
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
      if (!(isDollar || new RegExp(`^(?:npx\\s+)?${PROGRAM}(?:\\s|$)`).test(text) || new RegExp(`(?:&&|\\||\\s--)\\s*(?:npx\\s+)?${PROGRAM}\\s`).test(text))) {
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
 * Where to run a command, relative to the root, and its words as run there (the command's own, or
 * `args`, a form of it): the folder the text names; else the root if its files are there; else the
 * one folder of examples/ or of the CLI's test fixtures that holds them all (a doc that says
 * `dashcam.vigil` of the dashcam example, or `release.vigil` of the analysis fixtures,
 * docs/analysis.md).
 */
export function placeOf(root: string, command: DocCommand, args: readonly string[] = command.args): { cwd: string; args: string[] } {
  if (command.runIn !== undefined) {
    const prefix = command.relativeTo === undefined ? undefined : command.relativeTo.replace(/\/?$/, "/");
    return { cwd: command.runIn, args: prefix === undefined ? [...args] : args.map((w) => (w.startsWith(prefix) ? w.slice(prefix.length) : w)) };
  }
  const files = fileWords([...args]).filter((w) => !/^\.\.?\/?$/.test(w));
  const inputs = files.filter((w) => existsSync(join(root, w)) || !/\.(html|sarif|parquet|xml|sql)$/.test(w));
  if (inputs.every((w) => existsSync(join(root, w)))) return { cwd: ".", args: [...args] };
  const folders = ["examples", "packages/cli/test/fixtures"].flatMap((parent) =>
    readdirSync(join(root, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${parent}/${entry.name}`),
  );
  const holding = folders.filter((folder) => inputs.every((w) => existsSync(join(root, folder, w))));
  return { cwd: holding.length === 1 ? holding[0]! : ".", args: [...args] };
}

/**
 * A placeholder of a synopsis (`POLICY`, `TRACE…`, `--port N`), or a name an example gives the
 * reader's own program (`my-agent …`), and what a run puts in its place. `shown` is matched as whole
 * words, after the optional parts are left out; `verb` limits it to one command (`CMD…` is an agent
 * for `run`, a server for `mcp-gateway`). A value may hold `{port}` (a free port of 127.0.0.1) or
 * `{sidecar}` (the URL of a sidecar started for the run), which the runner fills.
 */
export interface Placeholder {
  readonly shown: string;
  readonly verb?: string;
  readonly value: string;
  readonly why: string;
}

/** Words that stand for something the reader supplies: `POLICY`, `FILE.jsonl`, `TRACE…`, `…`. */
const PLACEHOLDER_WORD = /^(?:[A-Z](?:[A-Z_]*[A-Z])?(?:\.\w+)?(?:…|\.\.\.)?|\S*…|\S*\.\.\.)$/;

/**
 * The command lines a documented command stands for, as the words after the program's name. A
 * command that is no synopsis is one line: itself, with what the table replaces in it (`my-agent …`,
 * `--port 8765`). A synopsis (a part in brackets, or a placeholder) is read as usage text is read:
 * - a part in `[…]` is optional and left out (`[--why]`, `[options]`, `[guard options]`), except an
 *   optional operand (`[PATH…]`: a run names one, from the table) and a listening port
 *   (`[--port N]`: left out, a server would take its fixed default port, on a machine other
 *   programs share), which are given, their first choice;
 * - `a | b` between words is a choice: one line for each;
 * - `a|b` inside a word is a choice of values: the first (`FILE.jsonl|FILE.parquet|-`);
 * - then each placeholder is replaced as `placeholders` says (those replaced are returned in
 *   `used`). A word that still looks like one (upper case, or ending in `…`) is returned in
 *   `unmapped`: the table lacks it.
 */
export function formsOf(command: DocCommand, placeholders: readonly Placeholder[]): { forms: string[][]; unmapped: string[]; used: Placeholder[] } {
  type Item = string | Item[];
  // The brackets that open and close a word become words of their own (`[--port` is `[`, `--port`;
  // a glob's `runs/[0-9]*` stays whole), and the optional parts a tree.
  const tokens = command.args.flatMap((word) => {
    const open = /^\[*/.exec(word)![0].length;
    const close = word.length > open ? /\]*$/.exec(word)![0].length : 0;
    return [...Array<string>(open).fill("["), ...(word.length > open + close ? [word.slice(open, word.length - close)] : []), ...Array<string>(close).fill("]")];
  });
  // Only a synopsis has choices: `|` in a concrete command is the command's own (a regular expression, say).
  const synopsis = tokens.some((token) => token === "[" || PLACEHOLDER_WORD.test(token));
  const stack: Item[][] = [[]];
  for (const token of tokens) {
    if (token === "[") stack.push([]);
    else if (token === "]" && stack.length > 1) {
      const group = stack.pop()!;
      stack.at(-1)!.push(group);
    } else stack.at(-1)!.push(token);
  }
  while (stack.length > 1) stack.at(-2)!.push(...stack.pop()!);
  const firstChoice = (items: Item[]): Item[] => {
    const bar = items.indexOf("|");
    return bar < 0 ? items : items.slice(0, bar);
  };
  const flat = (items: Item[]): string[] =>
    items.flatMap((item) => {
      if (typeof item === "string") return [item];
      const first = firstChoice(item);
      const operand = first.every((word) => typeof word === "string" && PLACEHOLDER_WORD.test(word));
      const port = first[0] === "--port";
      return operand || port ? flat(first) : [];
    });
  const words = synopsis ? flat(stack[0]!).map((word) => (word !== "|" && word.includes("|") ? word.split("|")[0]! : word)) : [...command.args];

  // A chain `a | b | c` at the top level: one line per alternative.
  const lines: string[][] = [];
  const bar = synopsis ? words.indexOf("|") : -1;
  if (bar < 0) lines.push(words);
  else {
    let end = bar;
    const choices = [words[bar - 1]!];
    while (words[end] === "|") {
      choices.push(words[end + 1]!);
      end += 2;
    }
    for (const choice of choices) lines.push([...words.slice(0, bar - 1), choice, ...words.slice(end)]);
  }

  const unmapped = new Set<string>();
  const used = new Set<Placeholder>();
  const verb = command.args[0];
  const applicable = placeholders
    .filter((p) => p.verb === undefined || p.verb === verb)
    .map((p) => ({ placeholder: p, words: p.shown.split(/\s+/) }))
    .sort((a, b) => b.words.length - a.words.length);
  const forms = lines.map((line) => {
    const out: string[] = [];
    for (let i = 0; i < line.length; ) {
      const match = applicable.find((p) => p.words.every((word, k) => line[i + k] === word));
      if (match !== undefined) {
        out.push(...match.placeholder.value.split(/\s+/).filter((word) => word !== ""));
        used.add(match.placeholder);
        i += match.words.length;
      } else {
        if (PLACEHOLDER_WORD.test(line[i]!)) unmapped.add(line[i]!);
        out.push(line[i]!);
        i++;
      }
    }
    return out;
  });
  return { forms, unmapped: [...unmapped], used: [...used] };
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
