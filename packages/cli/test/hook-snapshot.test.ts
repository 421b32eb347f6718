import { createServer as createHttpServer } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Server } from "node:net";
import { mkdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compactObservations, fileHash, observe, staleness, type Observation, type SnapshotManifest } from "../src/enforcement/hook-snapshot.js";
import { runHookProcess, type Answer } from "./support/hook-process.js";
import { comparable, expectFallback, hook, SESSION, SnapshotFixture, SPOILED } from "./support/hook-snapshot-fixture.js";
import { root, vigilc } from "./support/run-vigilc.js";

/**
 * The hook's startup snapshot (src/enforcement/hook-snapshot.ts): the command line `--install` writes starts the
 * hook from it, and gives the same answers as the normal path; where the snapshot is missing,
 * damaged, moved or out of date, the same command line answers with the normal path.
 */

let fixture: SnapshotFixture;
beforeAll(async () => {
  fixture = await SnapshotFixture.create("vigil-hook-snapshot-");
}, 120_000);
afterAll(() => fixture.dispose());

describe("the hook's startup snapshot", () => {
  it("is in the command line --print-settings gives, under Vigil's code, with the normal command after it", () => {
    const { command, blob } = fixture;
    expect(blob).not.toBe("");
    expect(command).toContain(`--snapshot-blob ${blob} `);
    expect(blob.startsWith(join(root, "packages") + "/")).toBe(true);
    expect(command).toMatch(/; s=\$\?; \[ \$s = 0 \] \|\| \[ \$s = 2 \] && exit \$s; exec \S+ \S+ hook claude-code --policy /);
  });

  it("is used, and answers a session's events as the normal path does (the first compiles the policy into the database)", async () => {
    const fast = fixture.makeProject("fast");
    const plain = fixture.makeProject("plain");
    const answers: Answer[] = [];
    for (const event of SESSION) {
      const fromSnapshot = await hook(fixture.lineFor(fast), fast, event);
      expect(fromSnapshot.stderr).toMatch(/^vigil hook snapshot: used\n/);
      const fromNormalPath = await hook(fixture.normalFor(plain), plain, event);
      expect(fromNormalPath.stderr).not.toContain("vigil hook snapshot");
      expect({ event, ...comparable(fromSnapshot, fast) }).toEqual({ event, ...comparable(fromNormalPath, plain) });
      answers.push(fromSnapshot);
    }
    // What was decided: `ls` let through, the rules' and the guard's refusals.
    const decision = (answer: Answer) => (answer.stdout === "" ? "none" : (JSON.parse(answer.stdout) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision);
    expect([1, 3, 5, 6, 7, 8, 9, 10].map((index) => decision(answers[index]!))).toEqual(["none", "none", "deny", "deny", "deny", "deny", "deny", "none"]);
    // Input that is not an event is refused, from the snapshot as without it.
    const garbage = await runHookProcess("/bin/sh", ["-c", fixture.lineFor(fast)], "not json", fast, { CLAUDE_PROJECT_DIR: fast, VIGIL_HOOK_SNAPSHOT_REPORT: "1" });
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).toMatch(/^vigil hook snapshot: used\n/);
  });

  it("with --egress (as --install writes it), whose ports something else holds: the same refusals of shell calls", async () => {
    // An HTTP server and a TCP server that are not Vigil's egress proxy.
    const http = createHttpServer((_, response) => response.writeHead(404).end("not a proxy"));
    const socks = createTcpServer((socket) => socket.end());
    const listen = (server: Server | ReturnType<typeof createHttpServer>) => new Promise<number>((resolvePromise) => server.listen(0, "127.0.0.1", () => resolvePromise((server.address() as AddressInfo).port)));
    const [httpPort, socksPort] = [await listen(http), await listen(socks)];
    try {
      const project = fixture.makeProject("egress-settings");
      const printed = await vigilc(["hook", "claude-code", "--print-settings", "--policy", ".claude/policy.vigil", "--egress", `${httpPort}:${socksPort}`], { cwd: project, env: { CLAUDE_PROJECT_DIR: project } });
      const line = (JSON.parse(printed.stdout) as { hooks: Record<string, { hooks: { command: string }[] }[]> }).hooks["PreToolUse"]![0]!.hooks[0]!.command;
      expect(line).toContain("--snapshot-blob");
      const fast = fixture.makeProject("egress-fast");
      const plain = fixture.makeProject("egress-plain");
      const normal = line.slice(line.indexOf("; exec ") + "; exec ".length);
      for (const event of [SESSION[1]!, SESSION[3]!, SESSION[10]!]) {
        const fromSnapshot = await hook(line.replaceAll(project, fast), fast, event);
        expect(fromSnapshot.stderr).toMatch(/^vigil hook snapshot: used\n/);
        const fromNormalPath = await hook(normal.replaceAll(project, plain), plain, event);
        expect({ event, ...comparable(fromSnapshot, fast) }).toEqual({ event, ...comparable(fromNormalPath, plain) });
        if ((event as { tool_name: string }).tool_name === "Bash") expect(fromSnapshot.stdout).toContain("is not Vigil's egress proxy");
      }
    } finally {
      http.close();
      socks.close();
    }
  });

  // The other ways to spoil it (moved, damaged, cut short) are hook-snapshot-fallback.test.ts's.
  it("falls back to the normal path, with the same answers, when the snapshot is missing", async () => {
    await expectFallback(fixture, SPOILED.find(([name]) => name === "missing")!);
  });
});

describe("what a snapshot checks before it answers", () => {
  let directory = "";
  let file = "";
  beforeAll(() => {
    directory = join(fixture.scratch, "checks");
    mkdirSync(join(directory, "package"), { recursive: true });
    file = join(directory, "package", "index.js");
    writeFileSync(file, "export {};\n");
  });
  const manifest = (observations: readonly Observation[]): SnapshotManifest => ({
    format: 1,
    node: { version: process.version, platform: process.platform, arch: process.arch, execPath: process.execPath },
    blob: file,
    observations,
  });

  it("a file written since (other bytes) makes it out of date; the same bytes written again do not", () => {
    const observed: Observation = ["stat", file, observe("stat", file), fileHash(file)!];
    expect(staleness(manifest([observed]), file)).toBeUndefined();
    const later = new Date(statSync(file).mtimeMs + 5_000);
    writeFileSync(file, "export {};\n");
    utimesSync(file, later, later);
    expect(observe("stat", file)).not.toBe(observed[2]);
    expect(staleness(manifest([observed]), file)).toBeUndefined();
    writeFileSync(file, "export const changed = 1;\n");
    expect(staleness(manifest([observed]), file)).toContain(`${file} changed since the snapshot was built`);
  });

  it("a package appearing where Node.js looks first makes it out of date", () => {
    const probes: Observation[] = [
      ["exists", join(directory, "package", "node_modules", "zod"), "no"],
      ["exists", join(directory, "package", "node_modules", "re2js"), "no"],
      ["exists", join(directory, "node_modules", "zod"), "no"],
    ];
    const compact = compactObservations(probes);
    // One missing directory stands for every package that would be looked for in it.
    expect(compact.map(([kind, path, expected]) => [kind, path, expected])).toEqual([
      ["exists", join(directory, "package", "node_modules"), "no"],
      ["exists", join(directory, "node_modules"), "no"],
    ]);
    expect(staleness(manifest(compact), file)).toBeUndefined();
    mkdirSync(join(directory, "node_modules", "zod"), { recursive: true });
    expect(staleness(manifest(compact), file)).toContain(join(directory, "node_modules"));
  });

  it("another Node.js, or a blob that is not the one built, makes it out of date", () => {
    const other = manifest([]);
    expect(staleness({ ...other, node: { ...other.node, version: "v0.0.1" } }, file)).toContain("built by Node.js v0.0.1");
    expect(staleness({ ...other, node: { ...other.node, execPath: "/elsewhere/node" } }, file)).toContain("/elsewhere/node");
    expect(staleness(other, join(directory, "package"))).toContain("is not the one built at");
  });
});
