import { afterAll, beforeAll, describe, it } from "vitest";
import { expectFallback, SnapshotFixture, SPOILED } from "./support/hook-snapshot-fixture.js";

/**
 * The hook's startup snapshot spoiled in every way but missing (that one is hook-snapshot.test.ts's):
 * moved elsewhere, damaged, cut short. The command line `--install` writes then answers with the
 * normal path, as the normal path does. Some thirty hook processes: a file of the heavy tier.
 */

let fixture: SnapshotFixture;
beforeAll(async () => {
  fixture = await SnapshotFixture.create("vigil-hook-snapshot-fallback-");
}, 120_000);
afterAll(() => fixture.dispose());

describe("the hook's startup snapshot, spoiled", () => {
  it.each(SPOILED.filter(([name]) => name !== "missing"))("falls back to the normal path, with the same answers, when the snapshot is %s", async (...spoiled) => {
    await expectFallback(fixture, spoiled);
  });
});
