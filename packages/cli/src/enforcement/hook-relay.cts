/**
 * The Claude Code hook's fast path: passes the event to the hook daemon of this install and
 * project (hook-daemon.ts) over its Unix socket, and relays the answer. Claude Code starts a new
 * process for every event, and this one loads nothing but `node:net`: the daemon, which keeps the
 * database open and the policy loaded, decides as `vigilc hook claude-code` would.
 *
 *   node hook-relay.cjs SOCKET
 *
 * Exit codes: 0 and 2 are the hook's answer (the daemon's, or a refusal), and {@link NOT_BLOCKING}
 * is the daemon's exit code 1 (a failure that does not block: Claude Code reads any code but 0 and
 * 2 alike), which is kept apart from Node.js's own 1 (this file missing, say). When no daemon listens
 * on SOCKET, it exits with {@link NO_DAEMON} before reading anything from standard input, and the
 * command line Claude Code runs (claude-settings.ts) answers the same input the normal way. Once it
 * has begun to read the event, it never exits with anything but these: a daemon that goes away
 * before a whole answer, or an answer that is not one, refuses the call.
 *
 * The socket lives in Vigil's state directory (`.vigil`), which the sandbox of every shell command
 * may neither read nor write: only what runs outside the sandbox (the hooks) can reach the daemon.
 *
 * This file is CommonJS on purpose, and small: it is loaded at every event.
 */
import { connect } from "node:net";

/** The exit code that says: no daemon answered, and nothing was read; answer without it. */
const NO_DAEMON = 75;
/** The daemon answered with exit code 1: a failure reported, not blocking (the end of a session cannot be blocked). */
const NOT_BLOCKING = 71;
/** Within Claude Code's 30 s hook timeout: a late answer is a refusal this relay makes, not a timeout (which lets the call run). */
const ANSWER_TIMEOUT_MS = 25_000;

function main(socketPath: string | undefined): void {
  if (socketPath === undefined || socketPath === "") {
    process.stderr.write("usage: node hook-relay.cjs SOCKET (the hook daemon's socket)\n");
    process.exit(NO_DAEMON);
  }
  let reading = false;
  let settled = false;
  const refuse = (why: string): void => {
    if (settled) return;
    settled = true;
    const reason = `Vigil's hook daemon did not answer (${why}); the call is refused.`;
    process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } }) + "\n");
    process.stderr.write(reason + "\n");
    process.exitCode = 2;
    socket.destroy();
  };
  // Whatever goes wrong once the event is being read refuses; before, the normal path answers.
  process.on("uncaughtException", (error) => {
    if (reading) refuse(error.message);
    else process.exit(NO_DAEMON);
  });

  const socket = connect(socketPath);
  const answer: Buffer[] = [];
  socket.on("error", (error) => {
    if (!reading) process.exit(NO_DAEMON);
    refuse(error.message);
  });
  socket.on("connect", () => {
    reading = true;
    const timer = setTimeout(() => refuse(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`), ANSWER_TIMEOUT_MS);
    timer.unref();
    // What the hook process would know besides the event: its working directory and environment.
    socket.write(JSON.stringify({ version: 1, cwd: process.cwd(), env: process.env }) + "\n");
    process.stdin.on("data", (chunk) => socket.write(chunk));
    process.stdin.on("end", () => socket.end());
    process.stdin.on("error", (error) => refuse(`standard input failed: ${error.message}`));
  });
  socket.on("data", (chunk) => answer.push(chunk));
  socket.on("end", () => {
    if (settled) return;
    let parsed: { stdout?: unknown; stderr?: unknown; exitCode?: unknown };
    try {
      parsed = JSON.parse(Buffer.concat(answer).toString("utf8")) as typeof parsed;
    } catch {
      return refuse(answer.length === 0 ? "it closed the connection without an answer" : "its answer is not JSON");
    }
    const { stdout, stderr, exitCode } = parsed;
    if (typeof stdout !== "string" || typeof stderr !== "string" || (exitCode !== 0 && exitCode !== 1 && exitCode !== 2)) {
      return refuse("its answer is not a hook's answer {stdout, stderr, exitCode}");
    }
    settled = true;
    process.stdout.write(stdout);
    process.stderr.write(stderr);
    process.exitCode = exitCode === 1 ? NOT_BLOCKING : exitCode;
  });
}

main(process.argv[2]);
