/**
 * `vigilc` as a library: `run(argv, io)` executes one command line and returns its exit code
 * (0 safe, 1 unsafe, 2 bad usage or input), writing through `io` instead of the process streams.
 */
export type { CliIo } from "./io.js";
export { EXIT_INPUT_ERROR, EXIT_SAFE, EXIT_UNSAFE, MAX_RENDERED_DIAGNOSTICS, run } from "./cli.js";
export { codeFrame, describeEvent, renderDiagnostic, renderReport, type Colors, type RenderReportInput } from "./reports/render.js";
