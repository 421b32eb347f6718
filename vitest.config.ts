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
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
