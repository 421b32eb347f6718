import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { root, serverMain } from "./support/lsp-client.js";

/** The command line of `vigil-language-server`, as the built executable and as the linked bin. */

function run(args: readonly string[], command: readonly string[] = [process.execPath, serverMain]) {
  return spawnSync(command[0]!, [...command.slice(1), ...args], { cwd: root, encoding: "utf8", timeout: 30_000, input: "" });
}

describe("vigil-language-server", () => {
  it("prints its version, the package's", () => {
    const result = run(["--version"]);
    expect(result.status).toBe(0);
    const manifest = JSON.parse(readFileSync(join(root, "packages/language-server/package.json"), "utf8")) as { version: string };
    expect(result.stdout).toBe(`${manifest.version}\n`);
  });

  it("prints its usage with --help", () => {
    const result = run(["--help"]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("Usage: vigil-language-server --stdio");
    expect(result.stdout).toContain("--node-ipc");
  });

  it("refuses an unknown flag with exit code 2", () => {
    const result = run(["--stdio", "--verbose"]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("unknown option `--verbose`");
    expect(result.stdout).toBe("");
  });

  it("refuses to start without a transport", () => {
    const result = run([]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("no transport");
  });

  it("refuses a socket that is not a port number", () => {
    const result = run(["--socket=abc"]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("--socket needs a number");
  });

  it("runs through npx from the repository root (the linked bin)", () => {
    const result = spawnSync("npx", ["--no-install", "vigil-language-server", "--version"], { cwd: root, encoding: "utf8", timeout: 60_000 });
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("exits when its input closes", () => {
    const result = spawnSync(process.execPath, [serverMain, "--stdio"], { cwd: root, encoding: "utf8", timeout: 30_000, input: "" });
    expect(result.signal).toBeNull();
    expect(result.status).toBe(1);
  });
});
