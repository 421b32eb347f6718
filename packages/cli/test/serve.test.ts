import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";

/**
 * `vigilc serve` refusing to start: a policy with errors, a token file it must not use. The sidecar
 * at work, driven over real HTTP on 127.0.0.1 (and over a Unix socket) until it is stopped with
 * SIGTERM, is in process.test.ts.
 */

const POLICY = `policy pipeline {
  /// A transform is validated before a frame is warped with it.
  rule validated: prec(action in {warpAffine} and transform = $x, action in {validate_output} and target = $x and status = ok)
    block "Run validate_output on the transform first."
  /// Exports need a person's approval.
  rule approve_export: abs(action in {export}) ask "Ask before exporting."
}
`;

let scratch = "";
let policy = "";

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigil-serve-"));
  policy = join(scratch, "pipeline.vigil");
  writeFileSync(policy, POLICY);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `vigilc serve` that is expected to refuse to start (should it start after all, the test hangs and fails at its time limit). */
const serveRefused = (args: readonly string[]) => runCli(["serve", "--policy", policy, ...args], { cwd: scratch });

describe("vigilc serve", () => {
  it("exit 2 when the policy has errors", async () => {
    const broken = join(scratch, "broken.vigil");
    writeFileSync(broken, "policy p { rule r: abs( }\n");
    const { code, stderr } = await runCli(["serve", "--policy", broken, "--port", "0", "--db", join(scratch, "broken.db")], { cwd: scratch });
    expect(code).toBe(2);
    expect(stderr).toMatch(/broken\.vigil:1:\d+: V\d{4}/);
  });
});

describe("vigilc serve: who may ask", () => {
  it("refuses to start (exit 2) with an admin token file others may read or write, or that holds no usable token", async () => {
    const database = join(scratch, "refused.db");
    const cases: [string, (file: string) => void, RegExp][] = [
      ["group-readable", (file) => writeFileSync(file, "f".repeat(64) + "\n", { mode: 0o640 }), /permissions 640 .* are too open/],
      ["world-writable", (file) => writeFileSync(file, "f".repeat(64) + "\n", { mode: 0o602 }), /permissions 602 .* are too open/],
      ["short", (file) => writeFileSync(file, "short-token\n", { mode: 0o600 }), /at least 32/],
      ["empty", (file) => writeFileSync(file, "\n", { mode: 0o600 }), /empty/],
      ["a directory", (file) => mkdirSync(file), /not a regular file/],
      ["a symbolic link", (file) => {
        writeFileSync(`${file}.target`, "f".repeat(64) + "\n", { mode: 0o600 });
        symlinkSync(`${file}.target`, file);
      }, /symbolic link/],
    ];
    for (const [name, make, message] of cases) {
      const file = join(scratch, `refused-${name.replace(/ /g, "-")}.token`);
      make(file);
      if (name.endsWith("writable") || name.endsWith("readable")) chmodSync(file, name === "group-readable" ? 0o640 : 0o602);
      const refused = await serveRefused(["--port", "0", "--db", database, "--token-file", file]);
      expect({ name, code: refused.code }).toEqual({ name, code: 2 });
      expect(refused.stderr).toContain(file);
      expect(refused.stderr).toMatch(message);
      expect(refused.stderr).not.toContain("f".repeat(64));
    }
    // The hook token file may be read by the agent's user (its group, say), but not be the admin's.
    const admin = join(scratch, "refused-admin.token");
    writeFileSync(admin, "a".repeat(64) + "\n", { mode: 0o600 });
    chmodSync(admin, 0o600);
    const same = join(scratch, "refused-same.token");
    writeFileSync(same, "a".repeat(64) + "\n", { mode: 0o640 });
    const refused = await serveRefused(["--port", "0", "--db", database, "--token-file", admin, "--hook-token-file", same]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/hook token .* is the admin token/);
    expect((await serveRefused(["--port", "0", "--db", database, "--token-file", admin, "--hook-token-file", admin])).code).toBe(2);
  });
});
