// The suites run by vitest rather than node's test runner: LangGraph's
// checkpointer validation registers its tests on vitest's global describe/it.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globals: true,
    include: ["test/**/*.vitest.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
