import { describe, expect, it } from "vitest";
import { closestName } from "@vigil/diagnostics";

describe("closestName", () => {
  it.each([
    ["wran", ["block", "warn", "ask"], "warn"],
    ["Block", ["block", "warn", "ask"], "block"],
    ["r3", ["R3", "r4"], "R3"],
    ["transfrom", ["transform", "path"], "transform"],
    ["warpAfine", ["warpAffine", "sample_frames"], "warpAffine"],
    ["validat", ["validate", "Validate", "unused"], "validate"],
    ["send_emial", ["send_email", "read_file"], "send_email"],
    ["V10066", ["V1006", "V1010", "T0011"], "V1006"],
    ["fiel_path", ["file_path", "path"], "file_path"],
    ["cmmand", ["command", "cmd"], "command"],
    ["gti push", ["git push", "git pull"], "git push"],
    ["databricks", ["databricks"], "databricks"],
  ])("suggests a misspelling of %j: %j", (name, known, expected) => {
    expect(closestName(name, known)).toBe(expected);
  });

  it.each([
    // One wrong letter of four is another word, not a slip.
    ["head", ["Read", "Edit", "Write", "Bash"]],
    ["read", ["reads_all", "head"]],
    ["cat", ["cut", "bat"]],
    // Short names are suggested only when they differ in case.
    ["ls", ["rm", "l", "lsof"]],
    ["cd", ["cp"]],
    ["sl", ["ls"]],
    ["x", ["y", "xy"]],
    ["frobnicate", ["block", "warn", "ask"]],
    ["error", ["block", "warn", "ask"]],
    ["path", ["bash", "patch_file"]],
  ])("suggests nothing for %j among %j", (name, known) => {
    expect(closestName(name, known)).toBeUndefined();
  });

  it("prefers the nearest name, then the one of the same case, then the first in order", () => {
    expect(closestName("warpAfine", ["warpaffine", "warpAffine"])).toBe("warpAffine");
    expect(closestName("abcdef", ["abcdex", "abcdey"])).toBe("abcdex");
    expect(closestName("abcdefg", ["abcdefgh", "abcdxfg"])).toBe("abcdefgh");
  });
});
