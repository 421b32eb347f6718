#!/usr/bin/env node
import { run } from "./cli.js";

process.exitCode = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  colors: process.stdout.isTTY === true && process.env["NO_COLOR"] === undefined,
  cwd: process.cwd(),
});
