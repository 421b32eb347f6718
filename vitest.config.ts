import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * The heavy tier: the test files `npm test` leaves out and `npm run test:all` (VIGIL_TIER=all) adds,
 * each with what it needs. This table is the only place a test is made heavy. A heavy file is not
 * collected outside its tier: it is neither run nor reported as passed. Property tests run in both
 * tiers, with fewer cases in the fast one (`cases(fast, full)` in test/support/tier.ts).
 */
const heavyTier: Readonly<Record<string, string>> = {
  "**/*.e2e.test.ts": "real hosts: the real Claude Code in its sandbox and `vigilc run` (bubblewrap, socat, ripgrep: scripts/test-hosts.sh), a real VS Code (code-server, about 800 MB, installed on first use) in Chromium",
  "test/sql-agrees-servers.test.ts": "a PostgreSQL server (Debian's packages, installed with apt-get when missing) and ClickHouse (chdb, 546 MB, installed on first use)",
  "packages/sql/test/clickhouse.test.ts": "ClickHouse (chdb, installed on first use)",
  "packages/cli/test/sql-engine.test.ts": "ClickHouse (chdb, installed on first use), and every recorded AgentDojo and τ-bench run through two engines",
  "packages/cli/test/html-browser.test.ts": "Chromium (the `@sparticuz/chromium` development dependency, or VIGIL_CHROMIUM)",
  "packages/cli/test/separate-user.test.ts": "root, to create operating-system users (useradd, groupadd, runuser)",
  "test/fuzz/**": "fuzzing campaigns, each bounded by time (VIGIL_FUZZ_SECONDS), not by a count of cases",
  "test/hostile/million-events.test.ts": "a million events (44 and 87 MiB of trace) through check, signature and --html",
  "test/hostile/scale.test.ts": "texts of 64 KiB and 200 KB, 130,000 events through Z3 and the lowering, sets of 80,000 and 160,000 values, 35,000 rules, each through vigilc",
  "packages/syntax/test/scale.test.ts": "policies of 30,000 to 200,000 rules, values or operands through the parser and the formatter",
  "packages/checker/test/scale.test.ts": "policies of 50,000 to 200,000 rules or values through the checker",
  "packages/smt/test/z3-at-scale.test.ts": "130,000 events through Z3 (a query of more than 20 MiB)",
  "packages/cli/test/hook-processes.test.ts": "dozens of hook processes at once on one database, and killed at random points",
  "packages/cli/test/hook-snapshot-fallback.test.ts": "some thirty hook processes, from a startup snapshot spoiled in three ways",
  "examples/tau-airline/tau-airline-smt.test.ts": "the 200 recorded τ-bench runs through Z3",
  "examples/tau-airline/drafted/tau-airline-drafted.test.ts": "the 200 recorded τ-bench runs through two policies, and a diff of the drafted policy's 43 rules against the hand-written one's",
  "test/docs-commands.test.ts": "every command the documentation shows, run as written (some ninety vigilc processes, several over whole corpora)",
};

const heavy = process.env["VIGIL_TIER"] === "all";

// Tests import every workspace package from its TypeScript sources (the "@vigil/source"
// export condition), so a test run never depends on a stale build.
export default defineConfig({
  resolve: { conditions: ["@vigil/source"] },
  ssr: { resolve: { conditions: ["@vigil/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts", "test/**/*.test.ts"],
    // Two tiers. `npm test` runs the fast tier: everything that needs no installed server, browser
    // or operating-system user and no long run, with property tests at a modest count of cases.
    // `npm run test:all` (VIGIL_TIER=all) installs the programs the end-to-end tests need and runs
    // both, the property tests at their full count. The heavy files are those of `heavyTier` above.
    exclude: heavy ? ["**/node_modules/**"] : ["**/node_modules/**", ...Object.keys(heavyTier)],
    // A test that asserts nothing cannot fail: every test must make at least one assertion.
    expect: { requireAssertions: true },
    // Generous: the CLI tests spawn vigilc many times at once on a machine of two cores.
    testTimeout: 120_000,
    // Two test files at a time even on two cores (vitest's default there is one): many tests wait
    // on the processes, servers and solvers they start. On a fresh clone of this 2-core machine,
    // 1,739 tests took 810 s this way; one file at a time, 1,726 tests had taken 1,138 s (1,782
    // tests took 717 s later, two at a time, once a process no longer loaded lodash-es).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    hookTimeout: 60_000,
  },
});
