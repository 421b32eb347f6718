import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { CallEvent } from "./call-events.js";
import { positionalsOf, programOf, textsOf } from "./guard-arguments.js";
import { realPath } from "./guard-paths.js";
import type { ProtectedPath } from "./guard-protected.js";

/**
 * Vigil itself, as the guard sees it: the paths of its code (its packages, what they load, the
 * `vigilc` command, the Node.js that runs it), and the commands that run Vigil or reinstall it.
 */

/** The directory of Vigil's own code: the folder that holds this package and its siblings. */
export function vigilCodeDirectory(): string {
  // dist/guard-vigil.js → the package → the folder of the packages (node_modules/@vigil, or packages/).
  return dirname(dirname(dirname(realPath(fileURLToPath(import.meta.url)))));
}

const codePaths = new Map<string, ProtectedPath[]>();

/**
 * Vigil's own code, which the hook runs: its packages, the `vigilc` command that starts it, the
 * packages its own depend on and the Node.js that runs it. Without any of them the hook cannot
 * start, and a hook that cannot start does not refuse anything. `code` is the folder of Vigil's
 * packages, this install's by default (another: what the paths of an install elsewhere would be).
 */
export function vigilCodePaths(code: string = vigilCodeDirectory()): ProtectedPath[] {
  const known = codePaths.get(code);
  if (known !== undefined) return known;
  const paths: ProtectedPath[] = [
    { path: code, what: "Vigil's own code", tree: true },
    { path: join(code, "..", ".bin", "vigilc"), what: "the `vigilc` command" },
    { path: join(code, "..", "node_modules", ".bin", "vigilc"), what: "the `vigilc` command" },
    ...vigilDependencies(code).map((path): ProtectedPath => ({ path, what: "a package Vigil's code needs", tree: true })),
    { path: process.execPath, what: "the Node.js that runs Vigil" },
  ];
  codePaths.set(code, paths);
  return paths;
}

/**
 * The directories of every package Vigil's own packages load, directly or through others (the
 * whole module graph), found as Node finds them: one package rewritten anywhere in it runs in the
 * hook.
 */
function vigilDependencies(code: string): string[] {
  const found = new Set<string>();
  let packages: string[] = [];
  try {
    packages = readdirSync(code);
  } catch {
    return [];
  }
  const queue = packages.map((name) => join(code, name));
  const visited = new Set<string>();
  while (queue.length > 0) {
    const directory = queue.pop()!;
    if (visited.has(directory)) continue;
    visited.add(directory);
    let manifest: { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
    try {
      manifest = JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as typeof manifest;
    } catch {
      continue;
    }
    for (const dependency of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      // The nearest `node_modules` above the package that holds it.
      for (let at = directory; ; at = dirname(at)) {
        const candidate = join(at, "node_modules", dependency);
        if (existsSync(candidate)) {
          const real = realPath(candidate);
          if (!real.startsWith(code + sep) && real !== code) found.add(real);
          queue.push(real);
          break;
        }
        if (dirname(at) === at) break;
      }
    }
  }
  return [...found];
}

/** Vigil's commands that change nothing: checking, formatting to standard output, explaining. */
const VIGIL_READ_ONLY = new Set(["check", "fmt", "explain", "signature", "lower", "help"]);

/** Programs that run a package's command: `npx vigilc …`, `npm exec`, `pnpm dlx`, `yarn vigilc …`, `bunx`. */
export const PACKAGE_RUNNERS = new Set(["npx", "npm", "pnpm", "pnpx", "yarn", "bun", "bunx"]);

/** The words a package runner is given after its name (`pnpm dlx vigilc hook`: `dlx`, `vigilc`, `hook`). */
export function runnerWords(event: CallEvent): string[] {
  return [...event.action.split(" ").slice(1), ...textsOf(event.args)];
}

/** Vigil's command or package, as a package runner is given it (`vigilc@latest`, `@vigil/cli`). */
const VIGIL_PACKAGE = /^(vigilc|@vigil\/cli)(@.*)?$/;

/**
 * Vigil's command in an event, run directly or by a package runner: its subcommand (undefined:
 * none, as `vigilc --help`) and the words after it.
 */
export function vigilCommand(event: CallEvent): { subcommand: string | undefined; rest: string[] } | undefined {
  const program = programOf(event);
  if (program === "vigilc" || program === "vigil-language-server") {
    const words = positionalsOf(event.args);
    return { subcommand: words[0], rest: words.slice(1) };
  }
  if (!PACKAGE_RUNNERS.has(program)) return undefined;
  const words = runnerWords(event);
  // `npx -p @vigil/cli vigilc hook`: the package, then its command.
  const at = words.findIndex((word, index) => VIGIL_PACKAGE.test(word) && !VIGIL_PACKAGE.test(words[index + 1] ?? ""));
  return at < 0 ? undefined : { subcommand: words[at + 1], rest: words.slice(at + 2) };
}

/**
 * How the event runs Vigil itself in a way that could change its state or forge an event (`vigilc
 * hook`, `npx vigilc serve`, `vigilc audit`…), or undefined. Checking a policy is fine.
 */
export function vigilInvocation(event: CallEvent): string | undefined {
  const vigil = vigilCommand(event);
  if (vigil === undefined || vigil.subcommand === undefined || VIGIL_READ_ONLY.has(vigil.subcommand)) return undefined;
  return `it runs Vigil itself (\`vigilc ${vigil.subcommand}\`), which could forge events or change Vigil's state`;
}

/** What package managers do to the packages they are given, that changes Vigil's code when one is Vigil's. */
const PACKAGE_CHANGES = new Set(["uninstall", "remove", "rm", "r", "un", "unlink", "install", "i", "add", "update", "up", "upgrade", "link"]);

/** How the event uninstalls, reinstalls or relinks Vigil (`npm uninstall @vigil/cli`), or undefined. */
export function vigilReinstall(event: CallEvent): string | undefined {
  const program = programOf(event);
  if (!["npm", "pnpm", "yarn", "bun"].includes(program)) return undefined;
  const words = [...event.action.split(" ").slice(1), ...textsOf(event.args)];
  if (!PACKAGE_CHANGES.has(words[0] ?? "") || !words.slice(1).some((word) => /^(@vigil\/[^@]+|vigilc)(@.*)?$/.test(word))) return undefined;
  return `it changes Vigil's own code (\`${program} ${words[0]}\` of a package of Vigil's)`;
}
