import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCall } from "../src/call-events.js";
import { databaseFiles, Guard, vigilCodePaths, type GuardFinding, type ProtectedPath } from "../src/guard.js";

/**
 * The guard's answer is the call's and the files', not the install's: the same command against the
 * same project gets the same findings whether Vigil runs from this working copy, from a
 * `node_modules` in a temporary folder, in the project itself or in the home directory, each with
 * its own `vigilc` first on PATH (as `npm test`, `npx` and a global install put it). The installs
 * are real directories laid out as npm lays them out, so that the guard finds Vigil's packages, the
 * packages they need and the `vigilc` command on PATH as it does in use.
 */

let root = "";
let project = "";
let home = "";

interface Install {
  /** The folder of Vigil's packages (`node_modules/@vigil`). */
  readonly code: string;
  /** The directory on PATH that holds its `vigilc`. */
  readonly bin: string;
}

/** A real install of Vigil's packages in `modules` (a `node_modules`), its `vigilc` linked from `bin`. */
function install(modules: string, bin: string): Install {
  const code = join(modules, "@vigil");
  const manifest = (directory: string, contents: object) => {
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, "package.json"), JSON.stringify(contents));
  };
  manifest(join(code, "cli"), { name: "@vigil/cli", bin: { vigilc: "bin/vigilc.js" }, dependencies: { "@vigil/runtime": "0.1.0", commander: "^12.0.0" } });
  manifest(join(code, "runtime"), { name: "@vigil/runtime", dependencies: { "better-sqlite3": "^11.0.0" } });
  manifest(join(modules, "commander"), { name: "commander" });
  manifest(join(modules, "better-sqlite3"), { name: "better-sqlite3" });
  const command = join(code, "cli", "bin", "vigilc.js");
  mkdirSync(dirname(command), { recursive: true });
  writeFileSync(command, "#!/usr/bin/env node\n");
  chmodSync(command, 0o755);
  mkdirSync(bin, { recursive: true });
  symlinkSync(relative(bin, command), join(bin, "vigilc"));
  return { code, bin };
}

/** What every guard here protects besides Vigil's code: the project's database, policy and token. */
function projectEntries(): ProtectedPath[] {
  return [
    ...databaseFiles(join(project, ".vigil", "audit.db")),
    { path: join(project, ".claude", "policy.vigil"), what: "the policy" },
    { path: join(project, ".vigil", "sidecar.token"), what: "the sidecar's token", secret: true },
  ];
}

/** The findings of a guard for Vigil installed with `code` against a shell command, with `path` as PATH. */
function findings(code: readonly ProtectedPath[], path: string, command: string): GuardFinding[] {
  const guard = new Guard([...projectEntries(), ...code], { claudeSettings: true, home });
  const read = readCall("Bash", { command }, "toolu_1");
  const before = process.env["PATH"];
  process.env["PATH"] = path;
  try {
    return guard.check(read.events, { cwd: project, notes: read.notes });
  } finally {
    process.env["PATH"] = before;
  }
}

const ordinary = [
  "vigilc check .claude/policy.vigil --trace trace.jsonl",
  "npx vigilc check .claude/policy.vigil --trace trace.jsonl",
  "vigilc fmt .claude/policy.vigil",
  "vigilc explain .claude/policy.vigil",
  "vigilc --version",
  "cat .claude/policy.vigil",
  "sqlite3 .vigil/audit.db 'select count(*) from audit'",
  "ls -la && git status",
];

const refused: [string, GuardFinding["guard"]][] = [
  ["vigilc hook claude-code --policy .claude/policy.vigil", "vigil_itself"],
  [`echo '{"hook_event_name":"PostToolUse"}' | npx vigilc hook claude-code`, "vigil_itself"],
  ["vigilc serve --policy .claude/policy.vigil", "vigil_itself"],
  ["rm -rf .vigil", "protected_path"],
  ["vigilc fmt -w .claude/policy.vigil", "protected_path"],
  ["vigilc check x.vigil --trace t.jsonl --html .claude/policy.vigil", "protected_path"],
  ["cat .vigil/sidecar.token", "protected_path"],
];

const installs: Record<string, () => Install> = {
  "a node_modules in a temporary folder": () => install(join(root, "tmp", "vigil-install", "node_modules"), join(root, "tmp", "vigil-install", "node_modules", ".bin")),
  "the project's own node_modules": () => install(join(project, "node_modules"), join(project, "node_modules", ".bin")),
  "a global install in the home directory": () => install(join(home, ".local", "lib", "node_modules"), join(home, ".local", "bin")),
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "vigil-guard-install-"));
  project = join(root, "project");
  home = join(root, "home");
  mkdirSync(join(project, ".vigil"), { recursive: true });
  mkdirSync(join(project, ".claude"), { recursive: true });
  mkdirSync(join(home, ".claude"), { recursive: true });
  writeFileSync(join(project, ".vigil", "audit.db"), "");
  writeFileSync(join(project, ".claude", "policy.vigil"), "policy p {}\n");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the guard gives the same findings wherever Vigil is installed", () => {
  describe.each(Object.keys(installs))("installed in %s, its `vigilc` first on PATH", (where) => {
    let elsewhere: Install;
    beforeAll(() => {
      elsewhere = installs[where]!();
    });
    const path = () => `${elsewhere.bin}:${process.env["PATH"] ?? ""}`;

    it("protects that install's code, its command and the packages it needs", () => {
      const code = vigilCodePaths(elsewhere.code);
      expect(code).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ path: elsewhere.code, tree: true }),
          expect.objectContaining({ what: "the `vigilc` command" }),
          expect.objectContaining({ what: "a package Vigil's code needs", path: expect.stringMatching(/commander$/) }),
          expect.objectContaining({ what: "a package Vigil's code needs", path: expect.stringMatching(/better-sqlite3$/) }),
        ]),
      );
      // The install's own files are refused to the agent, as this install's are.
      expect(findings(code, path(), `rm -rf ${elsewhere.code}`)).toMatchObject([{ guard: "protected_path", path: elsewhere.code }]);
      expect(findings(code, path(), `echo x > ${join(elsewhere.bin, "vigilc")}`).length).toBeGreaterThan(0);
    });

    it.each(ordinary)("lets `%s` through, as this install does", (command) => {
      const there = findings(vigilCodePaths(elsewhere.code), path(), command);
      expect(there).toEqual(findings(vigilCodePaths(), process.env["PATH"] ?? "", command));
      expect(there).toEqual([]);
    });

    it.each(refused)("refuses `%s` with the same findings as this install", (command, rule) => {
      const there = findings(vigilCodePaths(elsewhere.code), path(), command);
      expect(there).toEqual(findings(vigilCodePaths(), process.env["PATH"] ?? "", command));
      expect(there.length).toBeGreaterThan(0);
      expect(there.map((finding) => finding.guard)).toContain(rule);
    });
  });

  it("still takes a `vigilc` that is not Vigil's own, early on PATH in the home directory, as any program", () => {
    const bin = join(home, "planted", "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "vigilc"), "#!/bin/sh\nrm -f \"$@\"\n");
    chmodSync(join(bin, "vigilc"), 0o755);
    expect(findings(vigilCodePaths(), `${bin}:${process.env["PATH"] ?? ""}`, "vigilc check .claude/policy.vigil --trace trace.jsonl")).toMatchObject([
      { guard: "protected_path", path: join(project, ".claude", "policy.vigil"), effect: "use" },
    ]);
  });
});
