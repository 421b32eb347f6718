import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { examples, vigilc } from "./support/run-vigilc.js";

/**
 * `vigilc hook claude-code --install`: the settings of the boundary written into a project's
 * `.claude/settings.json`, keeping what the file held and never loosening it.
 */

let project = "";
let settingsFile = "";
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), "vigil-install-"));
  mkdirSync(join(project, ".claude"));
  copyFileSync(join(examples, "coding-agent", "coding-agent.vigil"), join(project, ".claude", "policy.vigil"));
  settingsFile = join(project, ".claude", "settings.json");
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

const install = (...extra: string[]) =>
  vigilc(["hook", "claude-code", "--install", "--policy", ".claude/policy.vigil", "--egress", "18080:18081", ...extra], { cwd: project, env: { CLAUDE_PROJECT_DIR: project, HOME: project } });

type Settings = {
  permissions: { deny: string[]; allow?: string[] };
  hooks: Record<string, { hooks: { command: string }[] }[]>;
  sandbox: Record<string, unknown> & { filesystem: { denyWrite: string[]; denyRead: string[]; allowWrite?: string[] }; network: Record<string, unknown> };
  model?: string;
};
const read = (): Settings => JSON.parse(readFileSync(settingsFile, "utf8")) as Settings;

describe("vigilc hook claude-code --install", () => {
  it("refuses to print or write settings whose hook has no policy (it would refuse every call)", async () => {
    for (const mode of ["--print-settings", "--install"]) {
      const refused = await vigilc(["hook", "claude-code", mode], { cwd: project, env: { CLAUDE_PROJECT_DIR: project, HOME: project } });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("--policy FILE (or --server URL) is required");
      expect(refused.stdout).toBe("");
    }
    expect(existsSync(settingsFile)).toBe(false);
  });

  it("writes the hook, a sandbox with no way out that still asks about shell commands, and the proxy as the only network", async () => {
    const installed = await install();
    expect(installed.stderr).toBe("");
    expect(installed.code).toBe(0);
    const settings = read();
    expect(settings.sandbox).toMatchObject({
      enabled: true,
      failIfUnavailable: true,
      allowUnsandboxedCommands: false,
      // Sandboxed is not allowed: Claude Code's permission rules still decide, as without Vigil.
      autoAllowBashIfSandboxed: false,
      network: { httpProxyPort: 18080, socksProxyPort: 18081 },
    });
    expect(settings.sandbox.filesystem.denyWrite).toEqual(expect.arrayContaining([join(project, ".vigil"), join(project, ".claude", "policy.vigil")]));
    expect(settings.sandbox.filesystem.denyRead).toEqual([join(project, ".vigil")]);
    expect(existsSync(join(project, ".vigil"))).toBe(true);
    expect(settings.hooks["SessionStart"]![0]!.hooks[0]!.command).toContain("--egress 18080:18081");
  });

  it("starts the hook from its startup snapshot, which the sandbox may not write, and else runs the same hook without it", async () => {
    const installed = await install();
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain("the hook starts from its startup snapshot");
    const settings = read();
    const command = settings.hooks["PreToolUse"]![0]!.hooks[0]!.command;
    // First the relay to the hook daemon, whose socket is in Vigil's state directory (which the sandbox may neither read nor write).
    const relay = /^(\S+) (\S+hook-relay\.cjs) (\S+\.sock); s=\$\?; \[ \$s = 0 \] \|\| \[ \$s = 2 \] \|\| \[ \$s = 71 \] && exit \$s; /.exec(command);
    expect(relay, command).not.toBeNull();
    expect(relay![1]).toBe(process.execPath);
    expect(relay![3]!.startsWith(join(project, ".vigil") + "/")).toBe(true);
    expect(settings.sandbox.filesystem.denyRead).toContain(join(project, ".vigil"));
    expect(installed.stdout).toContain(`the hook answers through its daemon, started at the first event (socket in ${join(project, ".vigil")})`);
    const blob = /^\S+ --snapshot-blob (\S+) /.exec(command.slice(relay![0].length))?.[1];
    expect(blob).toBeDefined();
    // The snapshot is Vigil's code: inside a directory the sandbox may not write.
    expect(settings.sandbox.filesystem.denyWrite.some((path) => blob!.startsWith(path + "/"))).toBe(true);
    expect(settings.permissions.deny.some((rule) => rule.startsWith("Edit(/") && blob!.startsWith(rule.slice("Edit(/".length, -"/**)".length) + "/"))).toBe(true);
    // Any exit but an answer (0) or a refusal (2), and the same hook runs without the snapshot.
    const [fast, normal] = command.slice(relay![0].length).split("; s=$?; [ $s = 0 ] || [ $s = 2 ] && exit $s; exec ");
    expect(normal).toBeDefined();
    expect(fast!.replace(` --snapshot-blob ${blob}`, "")).toBe(normal);
    for (const part of [fast!, normal!]) expect(part).toContain(`hook claude-code --policy ${join(project, ".claude", "policy.vigil")} --egress 18080:18081 --daemon`);
  });

  it("keeps what the file held: other keys, other hooks, the user's deny rules and sandbox paths; a second install replaces its own hook", async () => {
    writeFileSync(
      settingsFile,
      JSON.stringify({
        model: "opus",
        permissions: { allow: ["Bash(npm test:*)"], deny: ["Read(./secrets/**)"] },
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "lint-hook" }] }] },
        sandbox: { enabled: false, filesystem: { denyRead: ["~/.ssh"], allowWrite: ["/tmp/build"] }, network: { allowLocalBinding: true } },
      }),
    );
    expect((await install()).code).toBe(0);
    expect((await install()).code).toBe(0);
    const settings = read();
    expect(settings.model).toBe("opus");
    expect(settings.permissions.allow).toEqual(["Bash(npm test:*)"]);
    expect(settings.permissions.deny).toContain("Read(./secrets/**)");
    expect(settings.hooks["PreToolUse"]!.map((entry) => entry.hooks[0]!.command)).toEqual(["lint-hook", expect.stringContaining("hook claude-code")]);
    expect(settings.sandbox.enabled).toBe(true);
    expect(settings.sandbox.filesystem.denyRead).toEqual(["~/.ssh", join(project, ".vigil")]);
    expect(settings.sandbox.filesystem.allowWrite).toEqual(["/tmp/build"]);
    expect(settings.sandbox.network).toEqual({ allowLocalBinding: true, httpProxyPort: 18080, socksProxyPort: 18081 });
  });

  it.each([
    [{ network: { allowedDomains: ["github.com"] } }, "sandbox.network.allowedDomains"],
    [{ network: { deniedDomains: ["evil.example"] } }, "sandbox.network.deniedDomains"],
    [{ excludedCommands: ["docker"] }, "sandbox.excludedCommands"],
    [{ network: { allowAllUnixSockets: true } }, "sandbox.network.allowAllUnixSockets"],
    [{ enableWeakerNestedSandbox: true }, "sandbox.enableWeakerNestedSandbox"],
    [{ allowNestedUserNamespaces: true }, "sandbox.allowNestedUserNamespaces"],
  ])("refuses, and leaves the file as it was, when the sandbox holds what the boundary cannot keep: %j", async (sandbox, named) => {
    const before = JSON.stringify({ sandbox });
    writeFileSync(settingsFile, before);
    const installed = await install();
    expect(installed.code).toBe(2);
    expect(installed.stderr).toContain(named);
    expect(readFileSync(settingsFile, "utf8")).toBe(before);
  });

  it("takes over a sandbox already on, whose proxy asks about each new domain, only when told to (--replace-network)", async () => {
    const before = JSON.stringify({ sandbox: { enabled: true } });
    writeFileSync(settingsFile, before);
    const refused = await install();
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--replace-network");
    expect(readFileSync(settingsFile, "utf8")).toBe(before);
    expect((await install("--replace-network")).code).toBe(0);
    expect(read().sandbox.network).toEqual({ httpProxyPort: 18080, socksProxyPort: 18081 });
  });

  it("relaying to a sidecar: the hook token is denied to the sandbox and to Claude Code's Read", async () => {
    const token = join(project, "run", "hook.token");
    const installed = await vigilc(["hook", "claude-code", "--install", "--server", "unix:/run/vigil/sidecar.sock", "--token-file", token], { cwd: project, env: { CLAUDE_PROJECT_DIR: project, HOME: project } });
    expect(installed.code).toBe(0);
    const settings = read();
    expect(settings.sandbox.filesystem.denyRead).toContain(token);
    expect(settings.sandbox.filesystem.denyWrite).toContain(token);
    expect(settings.permissions.deny).toContain(`Read(/${token})`);
  });

  it("refuses a settings file that is not a JSON object, and leaves it as it was", async () => {
    writeFileSync(settingsFile, "{ not json");
    const installed = await install();
    expect(installed.code).toBe(2);
    expect(installed.stderr).toContain("is not JSON");
    expect(readFileSync(settingsFile, "utf8")).toBe("{ not json");
  });
});
