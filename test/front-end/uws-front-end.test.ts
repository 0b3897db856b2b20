import { describe, it } from "vitest";
import { loadNativeUws, type UwsModule } from "../../src/http/load-uws.js";
import { createUwsFrontEnd } from "../../src/http/uws-front-end.js";
import { describeFrontEndContract } from "./front-end.contract.js";
import { describeOverLimitContract } from "./over-limit.contract.js";

// Where the native binary does not load (the platforms the node:http twin exists for) this suite is skipped.
let uws: UwsModule | undefined;
let loadError = "";
try {
  uws = loadNativeUws();
} catch (error) {
  loadError = (error as Error).message;
}

if (uws) {
  const native = uws;
  describeFrontEndContract("uWebSockets.js", (core, limits) => createUwsFrontEnd(core, limits, native));
  describeOverLimitContract("uWebSockets.js", (core, limits) => createUwsFrontEnd(core, limits, native));
} else {
  describe.skip(`FrontEnd contract: uWebSockets.js (the native binary did not load: ${loadError})`, () => {
    it("runs where uWebSockets.js loads", () => undefined);
  });
}
