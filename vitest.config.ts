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
    hookTimeout: 60_000,
  },
});
