import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./support/ports.js";

/**
 * A throwaway PostgreSQL server for the tests: Debian's packages (installed here with apt-get when
 * they are missing, so that a fresh machine needs no step by hand), a cluster made in a temporary
 * directory, listening on loopback only on a free port, trusted for one user, removed when stopped.
 * PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` user the
 * package creates.
 */
export interface PostgresServer {
  readonly port: number;
  /** A connected client of the server's database. */
  connect(): Promise<pg.Client>;
  stop(): Promise<void>;
}

function binaries(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((version) => existsSync(join(root, version, "bin", "postgres")) && existsSync(join(root, version, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? undefined : join(root, versions[0]!, "bin");
}

const isRoot = process.getuid?.() === 0;

function install(): string {
  let bin = binaries();
  if (bin !== undefined) return bin;
  if (!isRoot) throw new Error("PostgreSQL is not installed (/usr/lib/postgresql/*/bin) and installing it needs root: apt-get install postgresql");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update"], { stdio: "ignore", env, timeout: 300_000 });
  execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "postgresql"], { stdio: "ignore", env, timeout: 600_000 });
  bin = binaries();
  if (bin === undefined) throw new Error("apt-get installed postgresql, but no server binaries are under /usr/lib/postgresql/*/bin");
  return bin;
}

/** Runs a command as the cluster's owner: as root, the `postgres` user. */
function asOwner(command: string, args: readonly string[]): [string, string[]] {
  return isRoot ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, [...args]];
}

const USER = "vigil";

export async function startPostgres(): Promise<PostgresServer> {
  const bin = install();
  const directory = mkdtempSync(join(tmpdir(), "vigil-postgres-"));
  if (isRoot) {
    const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"]).toString().trim());
    chownSync(directory, id("-u"), id("-g"));
  }
  const data = join(directory, "data");
  const [initdb, initArgs] = asOwner(join(bin, "initdb"), ["-D", data, "-U", USER, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
  execFileSync(initdb, initArgs, { stdio: "ignore", timeout: 120_000 });
  const port = await freePort();
  const [postgres, args] = asOwner(join(bin, "postgres"), [
    "-D",
    data,
    "-p",
    String(port),
    "-k",
    directory,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "fsync=off",
    "-c",
    "synchronous_commit=off",
    "-c",
    "full_page_writes=off",
    // Compiling the tests' many small queries to machine code costs seconds each and saves nothing.
    "-c",
    "jit=off",
  ]);
  const server: ChildProcess = spawn(postgres, args, { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  const connect = async (): Promise<pg.Client> => {
    const client = new pg.Client({ host: "127.0.0.1", port, user: USER, database: "postgres" });
    await client.connect();
    return client;
  };
  const stop = async (): Promise<void> => {
    if (server.exitCode === null) {
      server.kill("SIGINT");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (server.exitCode === null) server.kill("SIGKILL");
    }
    rmSync(directory, { recursive: true, force: true });
  };
  // Ready when it takes a connection (bounded: a server that does not start fails the test).
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const client = await connect();
      await client.end();
      break;
    } catch (error) {
      if (server.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error(`PostgreSQL did not start: ${(error as Error).message}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return { port, connect, stop };
}
