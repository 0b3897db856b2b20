/** valibot validation of a 1,000-event `/bulk` body (parseTrackingCall), beside the JSON.parse it follows. */
import { parseTrackingCall } from "../../src/schemas/tracking.js";
import { bulkEventsBody } from "../support/fixtures.js";
import { consume, runMicro, type MicroFigure, type MicroOptions } from "../support/micro.js";

export const BULK_EVENTS = 1000;

export async function benchTrackingBulk(options: MicroOptions): Promise<MicroFigure[]> {
  const body = bulkEventsBody(BULK_EVENTS);
  const text = JSON.stringify(body);
  const check = parseTrackingCall("bulk", body);
  if (!check.ok) throw new Error(`the benchmark's bulk body is invalid: ${JSON.stringify(check.issues.slice(0, 3))}`);
  return runMicro(
    "bulk body of 1,000 events",
    [
      { name: `parseTrackingCall("bulk") — valibot`, fn: () => consume(parseTrackingCall("bulk", body)), itemsPerCall: BULK_EVENTS },
      { name: "JSON.parse of the body", fn: () => consume(JSON.parse(text)), itemsPerCall: BULK_EVENTS },
    ],
    options,
  );
}
