import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandWords, serverToRun } from "../src/enforcement/mcp-gateway.js";
import { root } from "./support/paths.js";
import { runCli } from "./support/run-cli.js";

/**
 * `vigilc mcp-gateway` refusing to start, and the three ways of naming the server it runs. The gateway at work, in front of the reference filesystem
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

describe("vigilc mcp-gateway: naming the server", () => {
  const io = { cwd: "/work", env: { PATH: "/bin", KEEP: "1" }, stdout: () => {}, stderr: () => {} } as unknown as Parameters<typeof serverToRun>[2];
  const flags = (more: object = {}) => ({ policy: ["p.vigil"], ...more });

  it("exit 2, saying how to name it, when the server is named no way, two ways, or with a line that does not parse", async () => {
    const database = join(scratch, "none.db");
    const cases: [string[], RegExp][] = [
      [["--"], /name the MCP server to run/],
      [["--server-command", "node s.js", "--", "node", "s.js"], /one way only, not with `-- COMMAND…` and --server-command/],
      [["--server-command", "node s.js", "--server-config", "c.json"], /one way only/],
      [["--server-name", "fs", "--", "node"], /--server-name picks a server of --server-config/],
      [["--server-command", "node 'unclosed"], /a ' is not closed/],
      [["--server-command", "node s.js | tee log"], /\| is not run by a shell here/],
      [["--server-command", "  "], /--server-command is empty/],
      [["--server-config", join(scratch, "missing.json")], /missing\.json: ENOENT/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(["mcp-gateway", "--policy", policy, "--db", database, ...args]);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).toContain("usage: vigilc mcp-gateway --policy FILE… (-- COMMAND… | --server-command LINE | --server-config FILE [--server-name NAME])");
    }
  });

  it("splits --server-command into words as a shell splits a simple command, with nothing expanded", () => {
    expect(commandWords("node server.js /tmp/dir")).toEqual(["node", "server.js", "/tmp/dir"]);
    expect(commandWords(String.raw`  node  '/a dir/s.js' "it's \\ \"here\"" a\ b x'y'"z"  `)).toEqual(["node", "/a dir/s.js", String.raw`it's \ "here"`, "a b", "xyz"]);
    expect(commandWords(`'$HOME' "a;b" ''`)).toEqual(["$HOME", "a;b", ""]);
    expect(commandWords("echo $HOME")).toMatch(/\$ is not run by a shell here: quote it/);
    expect(commandWords('say "open')).toBe('a " is not closed');
    expect(commandWords("end\\")).toBe("the line ends with a \\");
    expect(serverToRun([], flags({ serverCommand: "node s.js --flag" }), io)).toEqual({ command: "node", args: ["s.js", "--flag"], cwd: "/work" });
    expect(serverToRun(["node", "s.js"], flags(), io)).toEqual({ command: "node", args: ["s.js"], cwd: "/work" });
  });

  it("reads --server-config as one server or as an MCP client's mcpServers, picked by --server-name or alone", () => {
    const file = (name: string, content: unknown) => {
      const path = join(scratch, name);
      writeFileSync(path, JSON.stringify(content));
      return path;
    };
    const one = file("one.json", { command: "node", args: ["s.js"], env: { TOKEN: "t" }, cwd: "sub" });
    expect(serverToRun([], flags({ serverConfig: one }), io)).toEqual({ command: "node", args: ["s.js"], cwd: join(scratch, "sub"), env: { PATH: "/bin", KEEP: "1", TOKEN: "t" } });
    const servers = file("servers.json", { mcpServers: { fs: { type: "stdio", command: "npx", args: ["-y", "server"] }, web: { type: "http", url: "http://localhost/mcp" } } });
    expect(serverToRun([], flags({ serverConfig: servers, serverName: "fs" }), io)).toEqual({ command: "npx", args: ["-y", "server"], cwd: "/work" });
    expect(serverToRun([], flags({ serverConfig: servers }), io)).toMatch(/several servers: pick one with --server-name \(fs, web\)/);
    expect(serverToRun([], flags({ serverConfig: servers, serverName: "web" }), io)).toMatch(/the server's type is "http": the gateway runs stdio servers only/);
    expect(serverToRun([], flags({ serverConfig: servers, serverName: "toString" }), io)).toMatch(/no server named "toString"/);
    const alone = file("alone.json", { mcpServers: { fs: { command: "node" } } });
    expect(serverToRun([], flags({ serverConfig: alone }), io)).toEqual({ command: "node", args: [], cwd: "/work" });
    expect(serverToRun([], flags({ serverConfig: file("bad-args.json", { command: "node", args: "s.js" }) }), io)).toMatch(/"args" must be a list of strings/);
    expect(serverToRun([], flags({ serverConfig: file("no-command.json", { args: [] }) }), io)).toMatch(/"command" must be a string/);
    expect(serverToRun([], flags({ serverConfig: file("bad-env.json", { command: "node", env: { N: 1 } }) }), io)).toMatch(/"env" must be an object of strings/);
    writeFileSync(join(scratch, "broken.json"), "{");
    expect(serverToRun([], flags({ serverConfig: join(scratch, "broken.json") }), io)).toMatch(/broken\.json: .*JSON/);
  });
});
