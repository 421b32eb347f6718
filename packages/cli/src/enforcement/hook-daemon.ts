import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, lstatSync, openSync, readdirSync, readFileSync, realpathSync, unlinkSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ClaudeCodeHookHost, vigilCodeDirectory, vigilCodePaths, type HookAnswer } from "@vigil/runtime";
import type { CliIo } from "../io.js";
import { hookSnapshotPaths, observe, staleness, type Observation, type SnapshotManifest } from "./hook-snapshot.js";

/**
 * The hook daemon: one long-lived process per install, project and hook options that answers
 * Claude Code's hook events, so that the process Claude Code starts for each event
 * (hook-relay.cts) loads nothing but `node:net`. It answers each event exactly as `vigilc hook
 * claude-code` with the same options would (hook.ts, `answerHookEvent`, with the working directory
 * and environment of the process that relayed it), through the same {@link ClaudeCodeHookHost},
 * which here keeps the database open, the policy loaded and the runs' monitors in memory between
 * events.
 *
 * - **Where**: a Unix socket in Vigil's state directory (`.vigil`, beside the database), which the
 *   sandbox of every shell command may neither read nor write, so only what runs outside it (the
 *   hooks) can reach the daemon. A database anywhere else has no such directory: no daemon then.
 *   The socket's name is a digest of the Node.js, the `vigilc` and the hook's words, so another
 *   install or other options never reach this daemon.
 * - **Started** by the normal path of the hook (given `--daemon`, as the installed command line
 *   is) when no daemon answered: in the background, and the event is answered the normal way.
 * - **Stops** when its code is no longer what the normal path would run (checked after each
 *   answer and every few seconds: Vigil's files, the packages they load, the Node.js binary), when
 *   its socket was removed or replaced, and after {@link IDLE_MS} without an event. The relay then
 *   finds no daemon, and the normal path answers (and starts a new one).
 */

/** How long the daemon waits for an event before it stops. */
export const IDLE_MS = 30 * 60_000;
/** How often the daemon looks at its code and its socket between events. */
const LOOK_MS = 5_000;
/** The largest event the daemon reads (a tool's result can be long): larger is refused. */
const MAX_EVENT_BYTES = 256 * 1024 * 1024;

/** The words of the hook's options that name the daemon itself, not what it answers. */
const DAEMON_WORDS = new Set(["--daemon", "--serve-daemon"]);

/** The hook's own words without the daemon's: what the daemon answers for. */
export function answeringWords(words: readonly string[]): string[] {
  return words.filter((word) => !DAEMON_WORDS.has(word));
}

/** `vigilc`'s script as the hook's command line names it (its real path). */
export function vigilcScript(): string {
  const script = process.argv[1] ?? "vigilc";
  try {
    return realpathSync(script);
  } catch {
    return script;
  }
}

/** The relay's script, which the installed command line runs first. */
export function relayScript(): string {
  return join(dirname(fileURLToPath(import.meta.url)), "hook-relay.cjs");
}

/**
 * The daemon's socket for the hook's `words` (its options, as on its command line) with
 * `database`, or why there is none.
 */
export function daemonSocket(words: readonly string[], database: string): { readonly path: string } | { readonly problem: string } {
  if (process.platform === "win32") return { problem: "no hook daemon on Windows" };
  if (basename(dirname(database)) !== ".vigil") {
    return { problem: `the database ${database} is not in a \`.vigil\` directory, which the sandbox seals whole: the daemon's socket has no place the agent cannot reach` };
  }
  const digest = createHash("sha256").update(JSON.stringify([process.execPath, vigilcScript(), answeringWords(words)])).digest("hex").slice(0, 16);
  const path = join(dirname(database), `hook-${digest}.sock`);
  // The system would cut a longer path short, and the relay would reach whatever is there.
  const longest = process.platform === "linux" ? 107 : 103;
  if (Buffer.byteLength(path) > longest) return { problem: `its socket's path ${path} is longer than the ${longest} bytes a Unix socket's path may have` };
  return { path };
}

/** Whether a daemon accepts connections on `socket` now. */
export function daemonServing(socket: string): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const probe = connect(socket);
    probe.once("connect", () => {
      probe.destroy();
      resolvePromise(true);
    });
    probe.once("error", () => resolvePromise(false));
  });
}

/**
 * Starts the daemon for the hook's `words` in the background, unless one serves already; returns
 * at once (the daemon logs to `hook-daemon.log` beside its socket). `env`: the environment of the
 * hook that starts it, which it keeps (the events tell it theirs).
 */
export async function ensureHookDaemon(words: readonly string[], socket: string, env: Readonly<Record<string, string | undefined>>): Promise<void> {
  if (await daemonServing(socket)) return;
  const log = openSync(join(dirname(socket), "hook-daemon.log"), "a", 0o600);
  try {
    const child = spawn(process.execPath, [vigilcScript(), "hook", ...answeringWords(words), "--serve-daemon"], {
      detached: true,
      stdio: ["ignore", log, log],
      env: env as NodeJS.ProcessEnv,
    });
    child.on("error", () => undefined);
    child.unref();
  } finally {
    closeSync(log);
  }
}

/** What the daemon is told with each event: the relaying process's working directory and environment. */
interface RelayHeader {
  readonly version: 1;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

function readHeader(line: string): RelayHeader | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return "the relay's header is not JSON";
  }
  const header = parsed as Partial<RelayHeader>;
  if (header === null || typeof header !== "object" || header.version !== 1 || typeof header.cwd !== "string" || header.env === null || typeof header.env !== "object") {
    return "the relay's header is not {version: 1, cwd, env}";
  }
  if (!Object.values(header.env).every((value) => typeof value === "string")) return "the relay's environment has a value that is not a string";
  return header as RelayHeader;
}

/** Answers one event: what `vigilc hook claude-code` with the daemon's options would answer. */
export type AnswerEvent = (event: string, context: { readonly cwd: string; readonly env: Readonly<Record<string, string | undefined>> }, host: ClaudeCodeHookHost) => Promise<HookAnswer>;

/**
 * Runs the daemon on `socket` until it stops (see above); returns the process's exit code. Exits
 * at once, with 0, when another daemon already serves the socket.
 */
export async function serveHookDaemon(socket: string, answerEvent: AnswerEvent, io: CliIo): Promise<number> {
  const code = codeObservations();
  const stale = staleCode(code);
  if (stale !== undefined) {
    io.stderr(`vigil hook daemon: not started: ${stale}\n`);
    return 1;
  }
  if (await daemonServing(socket)) return 0;
  // A socket file no daemon answers on (one that stopped without removing it) is replaced.
  try {
    if (lstatSync(socket).isSocket()) unlinkSync(socket);
  } catch {
    // None there.
  }
  const previous = process.umask(0o077);
  // Half open: the relay ends its side when the event is all sent, and the answer follows.
  const server: Server = createServer({ allowHalfOpen: true });
  try {
    await new Promise<void>((resolvePromise, reject) => {
      server.once("error", reject);
      server.listen(socket, () => resolvePromise());
    });
  } catch (error) {
    io.stderr(`vigil hook daemon: cannot listen on ${socket}: ${(error as Error).message}\n`);
    return 1;
  } finally {
    process.umask(previous);
  }
  const ownSocket = observe("lstat", socket);
  io.stderr(`vigil hook daemon: serving on ${socket} (process ${process.pid})\n`);

  const host = new ClaudeCodeHookHost();
  // One event at a time, in the order they came: as the database's write lock orders hook processes.
  let queue: Promise<void> = Promise.resolve();
  let lastEvent = Date.now();
  return new Promise<number>((resolvePromise) => {
    let stopping = false;
    const stop = (why: string): void => {
      if (stopping) return;
      stopping = true;
      io.stderr(`vigil hook daemon: stopping: ${why}\n`);
      clearInterval(looking);
      server.close();
      // The socket is removed only while it is still this daemon's.
      try {
        if (observe("lstat", socket) === ownSocket) unlinkSync(socket);
      } catch {
        // Gone already.
      }
      void queue.then(() => {
        host.close();
        resolvePromise(0);
      });
    };
    const look = (): void => {
      const why = staleCode(code) ?? (observe("lstat", socket) !== ownSocket ? `its socket ${socket} was removed or replaced` : undefined);
      if (why !== undefined) stop(why);
    };
    server.on("connection", (connection) => {
      lastEvent = Date.now();
      // Read at once, whatever is being answered: a relay slow to send holds up no other event.
      const request = readRequest(connection);
      queue = queue.then(async () => answerRequest(connection, await request, answerEvent, host)).then(look, look);
    });
    const looking = setInterval(() => {
      if (Date.now() - lastEvent > IDLE_MS) stop(`no event for ${IDLE_MS / 60_000} minutes`);
      else look();
    }, LOOK_MS);
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(signal, () => stop(signal));
  });
}

/** Reads one relayed request whole: the header line and the event; why not, when it cannot. */
function readRequest(connection: Socket): Promise<Buffer | string> {
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise<Buffer | string>((resolvePromise) => {
    connection.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_EVENT_BYTES) return resolvePromise(`the event is longer than ${MAX_EVENT_BYTES} bytes`);
      chunks.push(chunk);
    });
    connection.once("end", () => resolvePromise(Buffer.concat(chunks)));
    connection.once("error", (error) => resolvePromise(error.message));
    connection.once("close", () => resolvePromise("the relay went away"));
  });
}

/** Answers one relayed request and writes the answer; a request that could not be read gets none (the relay refuses). */
async function answerRequest(connection: Socket, request: Buffer | string, answerEvent: AnswerEvent, host: ClaudeCodeHookHost): Promise<void> {
  if (typeof request === "string") {
    connection.destroy();
    return;
  }
  const newline = request.indexOf(10);
  const header = newline < 0 ? "the relay sent no header" : readHeader(request.subarray(0, newline).toString("utf8"));
  const answer: HookAnswer =
    typeof header === "string"
      ? { stdout: "", stderr: `Vigil's hook daemon could not read the relayed event (${header}); the call is refused.\n`, exitCode: 2 }
      : await answerEvent(request.subarray(newline + 1).toString("utf8"), { cwd: header.cwd, env: header.env }, host).catch(
          (error: unknown): HookAnswer => ({ stdout: "", stderr: `Vigil's hook daemon failed (${(error as Error).message}); the call is refused.\n`, exitCode: 2 }),
        );
  // Written, or the relay gone: either way the next event is answered.
  await new Promise<void>((resolvePromise) => {
    connection.once("close", () => resolvePromise());
    connection.once("error", () => resolvePromise());
    connection.end(JSON.stringify(answer), () => resolvePromise());
  });
}

/**
 * What the daemon's code is made of, as it was when it started: the files of Vigil's packages
 * (every module it may load, now or later), the packages they load (as the hook's startup snapshot
 * records them, where this install has one, and each package's manifest), and the Node.js binary.
 */
interface CodeObservations {
  readonly snapshot?: { readonly manifest: SnapshotManifest; readonly blob: string };
  readonly observations: readonly Observation[];
}

function codeObservations(): CodeObservations {
  const observations: Observation[] = [["stat", process.execPath, observe("stat", process.execPath)]];
  const code = vigilCodeDirectory();
  for (const name of safeList(code)) {
    const dist = join(code, name, "dist");
    observations.push(["stat", join(code, name, "package.json"), observe("stat", join(code, name, "package.json"))]);
    for (const file of safeList(dist, true)) {
      if (/\.(c|m)?js$/.test(file)) observations.push(["stat", join(dist, file), observe("stat", join(dist, file))]);
    }
  }
  for (const entry of vigilCodePaths()) {
    if (entry.tree === true && !entry.path.startsWith(code)) {
      const manifest = join(entry.path, "package.json");
      observations.push(["stat", manifest, observe("stat", manifest)]);
    }
  }
  const paths = hookSnapshotPaths();
  let snapshot: CodeObservations["snapshot"];
  try {
    const manifest = JSON.parse(readFileSync(paths.manifest, "utf8")) as SnapshotManifest;
    if (existsSync(paths.blob) && staleness(manifest, paths.blob) === undefined) snapshot = { manifest, blob: paths.blob };
  } catch {
    // No snapshot: the packages' manifests stand for them.
  }
  return { ...(snapshot !== undefined ? { snapshot } : {}), observations };
}

/** Why the code is no longer what it was when the daemon started; undefined when it is. */
function staleCode(code: CodeObservations): string | undefined {
  for (const [kind, path, expected] of code.observations) {
    const now = observe(kind, path);
    if (now !== expected) return `${path} changed since the daemon started`;
  }
  return code.snapshot !== undefined ? staleness(code.snapshot.manifest, code.snapshot.blob) : undefined;
}

function safeList(directory: string, recursive = false): string[] {
  try {
    return readdirSync(directory, { recursive }).map(String);
  } catch {
    return [];
  }
}
