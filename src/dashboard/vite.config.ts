import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));

/** The dashboard builds into dist/dashboard, served by the service under /dashboard/ (src/routes/dashboard). */
export default defineConfig({
  root,
  base: "/dashboard/",
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("../../dist/dashboard", import.meta.url)),
    emptyOutDir: true,
    // The page's Content-Security-Policy allows no inline script: keep Vite's module-preload helper out.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
});
