import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readAudit, Store, verifyAudit } from "@vigil/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "./support/run-vigilc.js";

/** `vigilc serve`, spawned, driven over real HTTP on 127.0.0.1. */

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
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npx tsc -b\` before the CLI tests`);
  scratch = mkdtempSync(join(tmpdir(), "vigil-serve-"));
  policy = join(scratch, "pipeline.vigil");
  writeFileSync(policy, POLICY);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Server {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Starts `vigilc serve` on a free port; resolves once it listens. Killed after 60 s whatever happens. */
function serve(database: string, extra: readonly string[] = []): Promise<Server> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cli, "serve", "--policy", policy, "--port", "0", "--db", database, ...extra], { cwd: scratch, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const limit = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((done) =>
      child.on("close", (code, signal) => {
        clearTimeout(limit);
        done({ code, signal, stderr });
      }),
    );
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match !== null) resolvePromise({ child, url: match[1]!, exited });
    });
    void exited.then(({ code }) => reject(new Error(`vigilc serve exited (${code}) before listening: ${stderr}`)));
  });
}

async function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("vigilc serve", () => {
  it("decides, records and finishes per run over HTTP, with every decision in the audit log", async () => {
    const database = join(scratch, "sidecar.db");
    const server = await serve(database);
    try {
      const health = await call(server.url, "GET", "/v1/health");
      expect(health).toMatchObject({ status: 200, body: { ok: true, rules: ["pipeline.validated", "pipeline.approve_export"] } });

      const blocked = await call(server.url, "POST", "/v1/runs/run-1/decide", { id: "w1", action: "warpAffine", args: { transform: "M" } });
      expect(blocked.status).toBe(200);
      expect(blocked.body).toMatchObject({ decision: "block", verdict: "block", callId: "w1" });
      expect(blocked.body["reason"]).toContain("Run validate_output on the transform first.");
      expect(await call(server.url, "POST", "/v1/runs/run-1/cancel", { id: "w1" })).toMatchObject({ status: 200, body: { cancelled: true } });

      await call(server.url, "POST", "/v1/runs/run-1/decide", { id: "v1", action: "validate_output", args: { target: "M" } });
      expect(await call(server.url, "POST", "/v1/runs/run-1/record", { id: "v1", status: "ok", output: "schema ok" })).toMatchObject({ status: 200, body: { positions: [1] } });
      expect((await call(server.url, "POST", "/v1/runs/run-1/decide", { id: "w2", action: "warpAffine", args: { transform: "M" } })).body["decision"]).toBe("allow");
      // Another run has its own monitor: nothing was validated there.
      expect((await call(server.url, "POST", "/v1/runs/run-2/decide", { id: "w1", action: "warpAffine", args: { transform: "M" } })).body["decision"]).toBe("block");
      expect((await call(server.url, "POST", "/v1/runs/run-2/decide", { action: "export", args: {} })).body["decision"]).toBe("ask");

      await call(server.url, "POST", "/v1/runs/run-1/record", { id: "w2", status: "ok" });
      const standing = await call(server.url, "GET", "/v1/runs/run-1/standing");
      expect(standing.body).toMatchObject({ events: 2, pendingCalls: 0 });
      const finished = await call(server.url, "POST", "/v1/runs/run-1/finish", {});
      expect(finished.body).toMatchObject({ verdict: "safe" });
      // A run id may hold any character, percent-encoded.
      expect((await call(server.url, "POST", `/v1/runs/${encodeURIComponent("team/a b")}/message`, { text: "hello" })).status).toBe(200);
    } finally {
      server.child.kill("SIGTERM");
      expect((await server.exited).code).toBe(0);
    }
    const store = Store.open(database, { mustExist: true });
    try {
      expect(verifyAudit(store)).toMatchObject({ ok: true, records: 10 });
      expect([...readAudit(store)].filter((r) => r.kind === "decision").map((r) => `${r.runId}:${r.outcome}`)).toEqual([
        "run-1:block",
        "run-1:allow",
        "run-1:allow",
        "run-2:block",
        "run-2:ask",
      ]);
    } finally {
      store.close();
    }
  });

  it("answers bad requests with a 4xx status and a JSON error", async () => {
    const server = await serve(join(scratch, "errors.db"), ["--port", "0"]);
    try {
      const cases: [string, string, string | undefined, Record<string, string>, number, string][] = [
        ["POST", "/v1/runs/r/decide", "{not json", {}, 400, "bad_json"],
        ["POST", "/v1/runs/r/decide", "[1, 2]", {}, 400, "bad_json"],
        ["POST", "/v1/runs/r/decide", JSON.stringify({ args: {} }), {}, 400, "bad_request"],
        ["POST", "/v1/runs/r/decide", JSON.stringify({ action: "x", args: [1] }), {}, 400, "bad_request"],
        ["POST", "/v1/runs/r/record", JSON.stringify({ status: "done" }), {}, 400, "bad_request"],
        ["POST", "/v1/runs/r/record", JSON.stringify({ id: "nothing", status: "ok" }), {}, 400, "bad_request"],
        ["POST", "/v1/runs/r/cancel", JSON.stringify({ id: "nothing" }), {}, 404, "no_such_call"],
        ["GET", "/v1/runs/r/decide", undefined, {}, 405, "method_not_allowed"],
        ["POST", "/v1/runs/r/explode", "{}", {}, 404, "not_found"],
        ["POST", "/v1/runs/r/decide", "action=x", { "content-type": "application/x-www-form-urlencoded" }, 415, "unsupported_media_type"],
        ["POST", `/v1/runs/${"r".repeat(300)}/decide`, "{}", {}, 400, "bad_run_id"],
      ];
      for (const [method, path, body, headers, status, code] of cases) {
        const response = await call(server.url, method, path, body, headers);
        expect({ method, path, status: response.status, code: (response.body["error"] as { code: string }).code }).toEqual({ method, path, status, code });
        expect((response.body["error"] as { message: string }).message.length).toBeGreaterThan(10);
      }
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
    }
  });

  it("refuses a body over the limit with 413, declared or streamed", async () => {
    const server = await serve(join(scratch, "large.db"));
    try {
      const big = JSON.stringify({ action: "x", args: { blob: "x".repeat(2 * 1024 * 1024) } });
      expect((await call(server.url, "POST", "/v1/runs/r/decide", big)).status).toBe(413);
      // Streamed without a length (chunked): cut off as it arrives.
      const streamed = await new Promise<number>((resolvePromise, reject) => {
        const port = Number(new URL(server.url).port);
        const req = request({ host: "127.0.0.1", port, method: "POST", path: "/v1/runs/r/decide", headers: { "content-type": "application/json" } }, (response) => {
          response.resume();
          resolvePromise(response.statusCode ?? 0);
        });
        req.on("error", reject);
        const piece = "x".repeat(64 * 1024);
        let sent = 0;
        const write = (): void => {
          while (sent < 40) {
            sent++;
            if (!req.write(piece)) {
              req.once("drain", write);
              return;
            }
          }
          req.end();
        };
        write();
      });
      expect(streamed).toBe(413);
      // The server is still there for the next request.
      expect((await call(server.url, "GET", "/v1/health")).status).toBe(200);
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
    }
  });

  it("on SIGTERM finishes the request in flight, then closes the database and exits 0", async () => {
    const database = join(scratch, "graceful.db");
    const server = await serve(database);
    const port = Number(new URL(server.url).port);
    // A request whose body arrives in two parts, SIGTERM between them.
    const answered = new Promise<{ status: number; body: string }>((resolvePromise, reject) => {
      const req = request({ host: "127.0.0.1", port, method: "POST", path: "/v1/runs/r/decide", headers: { "content-type": "application/json" } }, (response) => {
        let body = "";
        response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
        response.on("end", () => resolvePromise({ status: response.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.write('{"id": "late", "action": "export",');
      setTimeout(() => {
        server.child.kill("SIGTERM");
        setTimeout(() => req.end(' "args": {}}'), 300);
      }, 200);
    });
    const response = await answered;
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ decision: "ask", callId: "late" });
    const exit = await server.exited;
    expect(exit.code).toBe(0);
    expect(exit.stderr).toContain("stopped (SIGTERM)");
    const store = Store.open(database, { mustExist: true });
    try {
      expect(verifyAudit(store)).toMatchObject({ ok: true, records: 1 });
    } finally {
      store.close();
    }
  });

  it("exit 2 when the policy has errors", async () => {
    const broken = join(scratch, "broken.vigil");
    writeFileSync(broken, "policy p { rule r: abs( }\n");
    const child = spawn(process.execPath, [cli, "serve", "--policy", broken, "--port", "0", "--db", join(scratch, "broken.db")], { cwd: scratch });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const limit = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const code = await new Promise<number | null>((done) => child.on("close", (exitCode) => done(exitCode)));
    clearTimeout(limit);
    expect(code).toBe(2);
    expect(stderr).toMatch(/broken\.vigil:1:\d+: V\d{4}/);
  });
});
