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
 * Z3's WebAssembly runtime writes its diagnostics to stderr. The one message a clean shutdown can
 * produce — a stopped worker's late clean-up notice — is noise; everything else is passed on.
 */
function reportRuntimeMessage(text: string): void {
  if (/command from terminated worker/.test(text)) return;
  process.stderr.write(`${text}\n`);
}
