import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Tests import every workspace package from its TypeScript sources (the "@vigil/source"
// export condition), so a test run never depends on a stale build.
export default defineConfig({
  resolve: { conditions: ["@vigil/source"] },
  ssr: { resolve: { conditions: ["@vigil/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts", "test/**/*.test.ts"],
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
