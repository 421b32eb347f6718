import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import * as entryPoint from "chevrotain";
import { describe, expect, it } from "vitest";
import { chevrotainLoadedFrom, Lexer } from "../src/chevrotain.js";

/**
 * The parser runs on chevrotain's single-file build (src/chevrotain.ts), the same version as the
 * package's entry point, without the ~700 modules of lodash-es that entry point loads.
 */
describe("chevrotain's single-file build", () => {
  it("is what the syntax package loads, of the same version as the package installed", async () => {
    expect(chevrotainLoadedFrom).toMatch(/\/chevrotain\/lib\/chevrotain\.mjs$/);
    const single = (await import(chevrotainLoadedFrom)) as typeof entryPoint;
    const manifest = JSON.parse(readFileSync(join(dirname(createRequire(import.meta.url).resolve("chevrotain")), "..", "..", "package.json"), "utf8")) as { version: string };
    expect(single.VERSION).toBe(manifest.version);
    expect(entryPoint.VERSION).toBe(manifest.version);
    expect(Lexer).toBe(single.Lexer);
  });

  it("keeps lodash-es out of a process that parses (the built package, as vigilc loads it)", () => {
    const built = resolve(import.meta.dirname, "../dist/index.js");
    const script = `const { parse } = await import(${JSON.stringify(built)}); if (parse("policy p { rule r: abs(action in {a}) }").diagnostics.length !== 0) process.exit(3);`;
    // Every module the process loads, as a loader hook sees it. The hooks run on a thread of their
    // own: each line is written to the file descriptor at once, so none is lost when the process exits.
    const loader = 'import { writeSync } from "node:fs"; export async function load(url, context, next) { writeSync(2, url + "\\n"); return next(url, context); }';
    const hook = `data:text/javascript,${encodeURIComponent(`import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(loader)}`)});`)}`;
    const run = spawnSync(process.execPath, ["--import", hook, "--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    const loaded = run.stderr;
    expect(loaded).toContain("chevrotain/lib/chevrotain.mjs");
    expect(loaded).not.toContain("lodash-es");
  });
});
