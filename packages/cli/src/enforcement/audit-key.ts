import { readFileSync } from "node:fs";

/**
 * The key of the audit chain: the contents of `keyFile` (without its trailing newline) when given,
 * else `VIGIL_AUDIT_KEY`. A key file keeps the key out of the environment, which an agent's shell
 * commands inherit; the sandbox's settings deny reading the file.
 */
export function auditKey(keyFile: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env): string | undefined | { problem: string } {
  if (keyFile === undefined) {
    const key = env["VIGIL_AUDIT_KEY"];
    return key !== undefined && key !== "" ? key : undefined;
  }
  try {
    const key = readFileSync(keyFile, "utf8").replace(/\r?\n$/, "");
    return key !== "" ? key : { problem: `the audit key file ${keyFile} is empty` };
  } catch (error) {
    return { problem: `cannot read the audit key file ${keyFile}: ${(error as Error).message}` };
  }
}
