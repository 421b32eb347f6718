#!/usr/bin/env node
import { runProcess } from "./process-main.js";

const argv = process.argv.slice(2);
// `vigilc hook` runs once per event of an agent (each tool call): it goes straight to its own module
// and loads only what a decision needs, not the command tree with its parsers and renderers. (The
// hook Claude Code runs starts from a startup snapshot of that module where there is one: see
// enforcement/hook-snapshot.ts.)
const { run } = argv[0] === "hook" ? await import("./enforcement/hook.js") : await import("./cli.js");
await runProcess(run, argv);
