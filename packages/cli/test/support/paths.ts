import { join, resolve } from "node:path";

const here = import.meta.dirname;

/** The repository root, the built CLI, the shipped examples and this package's fixtures. */
export const root = resolve(here, "../../../..");
export const cli = resolve(here, "../../dist/main.js");
export const examples = join(root, "examples");
export const fixtures = resolve(here, "../fixtures");
