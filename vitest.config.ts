import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "native-free/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Server suites spawn real processes on ephemeral ports; two cores do not gain from more forks.
    maxWorkers: 2,
  },
});
