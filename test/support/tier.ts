/**
 * The tier a test run is in, and how many cases a property test runs in it. `npm test` is the fast
 * tier; `npm run test:all` sets `VIGIL_TIER=all` and runs the heavy tier too (vitest.config.ts lists
 * the heavy files, and says what each needs).
 *
 * Every property test takes its number of cases from `cases`, so that the fast tier is quick on a
 * small machine and the heavy tier runs the full count. `VIGIL_PROPERTY_RUNS=N` overrides both: every
 * property test then runs N / 2,000 times its full count (2,000 is the full count of
 * test/engines-agree.test.ts, which therefore runs N cases), at least one case.
 */

export type Tier = "fast" | "all";

export const tier: Tier = process.env["VIGIL_TIER"] === "all" ? "all" : "fast";

/** The base the full counts are scaled against by `VIGIL_PROPERTY_RUNS`. */
const BASE_RUNS = 2000;

/** The number of cases of a property test: `fast` in the fast tier, `full` in the heavy tier. */
export function cases(fast: number, full: number): number {
  const setting = process.env["VIGIL_PROPERTY_RUNS"];
  if (setting !== undefined && setting !== "") {
    const runs = Number(setting);
    if (!(runs > 0)) throw new Error(`VIGIL_PROPERTY_RUNS must be a positive number, not ${JSON.stringify(setting)}`);
    return Math.max(1, Math.round((full * runs) / BASE_RUNS));
  }
  return tier === "all" ? full : fast;
}
