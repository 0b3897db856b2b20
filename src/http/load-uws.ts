import { createRequire } from "node:module";
import type * as Uws from "uWebSockets.js";

export type UwsModule = typeof Uws;

/**
 * Loads uWebSockets.js's native binary directly. The package's own entry falls back to a slow JS
 * re-implementation with only a console warning; we would rather know, and use our node:http twin instead.
 */
export function loadNativeUws(): UwsModule {
  const require = createRequire(import.meta.url);
  const binary = `uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  return require(binary) as UwsModule;
}
