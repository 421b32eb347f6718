import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Chevrotain, loaded from the single-file build its package ships (`lib/chevrotain.mjs`).
 *
 * The package's entry point imports lodash-es one function per module: about 700 modules, half a
 * second at every start of a process that parses (each `vigilc` command, the Claude Code hook, the
 * language server and each of its worker threads); the single-file build of the same version
 * loads in about 25 ms. The package's `exports` name only its entry point, so the file is found
 * beside it. Should it be missing (another layout), the entry point is loaded: slower, the same
 * parser. A bundler (the editor extension's) replaces this module with the package itself.
 *
 * Every other module of this package imports chevrotain's values from here; types may come from
 * "chevrotain" directly.
 */
type Chevrotain = typeof import("chevrotain");

async function load(): Promise<{ module: Chevrotain; from: string }> {
  try {
    const entry = createRequire(import.meta.url).resolve("chevrotain");
    const singleFile = pathToFileURL(join(dirname(entry), "..", "chevrotain.mjs")).href;
    return { module: (await import(singleFile)) as Chevrotain, from: singleFile };
  } catch {
    return { module: await import("chevrotain"), from: "chevrotain" };
  }
}

const { module: chevrotain, from } = await load();

/** Where chevrotain was loaded from: the single-file build's URL, or "chevrotain" (the entry point). */
export const chevrotainLoadedFrom = from;

export const { createToken, createTokenInstance, CstParser, EmbeddedActionsParser, Lexer, tokenMatcher } = chevrotain;
