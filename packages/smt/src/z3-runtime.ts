import type { init } from "z3-solver";

export type Z3Api = Awaited<ReturnType<typeof init>>;

/**
 * z3-solver is loaded on first use, not when this module is imported: a program that never decides
 * with the solver (the language server, the monitor) neither pays for loading it nor needs it
 * installed beside a bundle.
 */
const loadZ3 = (): Promise<typeof import("z3-solver")> => import("z3-solver");

/**
 * The process's one Z3 runtime. Every `init()` of z3-solver instantiates a new WebAssembly module
 * with its own memory and worker threads, and two of them in one process corrupt each other; so
 * all deciders share one runtime, counted, and its threads are stopped when the last user leaves.
 */
let runtime: Promise<Z3Api> | undefined;
let users = 0;

export async function acquireZ3(): Promise<Z3Api> {
  users++;
  runtime ??= loadZ3().then(({ init }) => init({ printErr: reportRuntimeMessage }));
  try {
    return await runtime;
  } catch (error) {
    users--;
    runtime = undefined;
    throw error;
  }
}

export async function releaseZ3(): Promise<void> {
  if (users === 0 || runtime === undefined) return;
  users--;
  if (users > 0) return;
  const api = await runtime;
  runtime = undefined;
  // A worker that just finished a solver call may still have its clean-up message in flight; let
  // it arrive before the workers are stopped.
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
  const { killThreads } = await loadZ3();
  await killThreads(api.em);
}

/**
 * Replaces a runtime that failed with a WebAssembly trap (`memory access out of bounds`, an
 * `unreachable`): its memory is then in no known state, and no further call into it can be
 * trusted. Its threads are stopped, and the caller's hold moves to a new runtime, which later
 * acquirers share; a holder still using the old one gets errors from it, never wrong answers.
 */
export async function replaceBrokenZ3(broken: Z3Api): Promise<Z3Api> {
  const current = runtime === undefined ? undefined : await runtime.catch(() => undefined);
  if (current === broken) runtime = undefined;
  try {
    const { killThreads } = await loadZ3();
    await killThreads(broken.em);
  } catch {
    // Its threads may be gone already.
  }
  runtime ??= loadZ3().then(({ init }) => init({ printErr: reportRuntimeMessage }));
  try {
    return await runtime;
  } catch (error) {
    runtime = undefined;
    throw error;
  }
}

/** Whether an error is a WebAssembly trap, after which a runtime must be replaced. */
export function isRuntimeTrap(error: unknown): boolean {
  // `WebAssembly.RuntimeError`, by name: the library's types here do not declare `WebAssembly`.
  return error instanceof Error && error.constructor.name === "RuntimeError";
}

/**
 * Z3's WebAssembly runtime writes its diagnostics to stderr. The one message a clean shutdown can
 * produce — a stopped worker's late clean-up notice — is noise; everything else is passed on.
 */
function reportRuntimeMessage(text: string): void {
  if (/command from terminated worker/.test(text)) return;
  process.stderr.write(`${text}\n`);
}
