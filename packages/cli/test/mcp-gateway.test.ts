import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root } from "./support/paths.js";
import { runCli } from "./support/run-cli.js";

/**
 * `vigilc mcp-gateway` refusing to start. The gateway at work, in front of the reference filesystem
 * MCP server and driven by the MCP SDK's own client over the stdio of the process the client
 * spawns, is in process.test.ts.
 */

const POLICY = `policy files {
  /// Credential files are never read.
  rule no_credentials: abs(action in {read_text_file, read_file, read_multiple_files} and path ~ "*.env")
    block "Do not read credential files; ask the user for the value you need."
  /// A file is written only after a directory was listed in this session.
  rule list_before_write: prec(action in {write_file}, action in {list_directory} and status = ok)
    block "List the directory (list_directory) before writing into it."
}
`;

const server = join(root, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
let scratch = "";
let served = "";
let policy = "";

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigil-mcp-"));
  served = join(scratch, "served");
  mkdirSync(served);
  policy = join(scratch, "files.vigil");
  writeFileSync(policy, POLICY);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("vigilc mcp-gateway", () => {
  it("exit 2 without a server to run, or with a policy that has errors", async () => {
    const none = await runCli(["mcp-gateway", "--policy", policy, "--db", join(scratch, "none.db"), "--"]);
    expect(none.code).toBe(2);
    const broken = join(scratch, "broken.vigil");
    writeFileSync(broken, "policy p { rule r: prec( }\n");
    const invalid = await runCli(["mcp-gateway", "--policy", broken, "--db", join(scratch, "none.db"), "--", process.execPath, server, served]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/broken\.vigil:1:\d+: V\d{4}/);
  });
});
