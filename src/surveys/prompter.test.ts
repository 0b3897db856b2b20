import { describe, expect, it } from "vitest";
import { DAY_MS } from "../analytics/keys.js";
import { promptFrame } from "./prompt-hub.js";
import { inQuietPeriod, qualifies } from "./prompter.js";

const NOW = Date.UTC(2026, 10, 25, 12);

describe("who a survey asks", () => {
  it("asks after N uses", () => {
    const rule = { afterUses: 3, afterDays: null };
    expect(qualifies(rule, { uses: 2, firstAt: NOW - 10 * DAY_MS }, NOW)).toBe(false);
    expect(qualifies(rule, { uses: 3, firstAt: NOW }, NOW)).toBe(true);
  });

  it("asks D days after the first use, whatever the number of uses", () => {
    const rule = { afterUses: null, afterDays: 2 };
    expect(qualifies(rule, { uses: 1, firstAt: NOW - 2 * DAY_MS + 1 }, NOW)).toBe(false);
    expect(qualifies(rule, { uses: 1, firstAt: NOW - 2 * DAY_MS }, NOW)).toBe(true);
  });

  it("asks on either condition when both are set, and never a user who never used the feature", () => {
    const rule = { afterUses: 5, afterDays: 7 };
    expect(qualifies(rule, { uses: 5, firstAt: NOW }, NOW)).toBe(true);
    expect(qualifies(rule, { uses: 1, firstAt: NOW - 8 * DAY_MS }, NOW)).toBe(true);
    expect(qualifies(rule, { uses: 4, firstAt: NOW - 6 * DAY_MS }, NOW)).toBe(false);
    expect(qualifies({ afterUses: null, afterDays: 0 }, { uses: 0, firstAt: null }, NOW)).toBe(false);
  });

  it("keeps the quiet period after the user's last prompt", () => {
    expect(inQuietPeriod(undefined, 30, NOW)).toBe(false);
    expect(inQuietPeriod(NOW - 29 * DAY_MS, 30, NOW)).toBe(true);
    expect(inQuietPeriod(NOW - 30 * DAY_MS, 30, NOW)).toBe(false);
    expect(inQuietPeriod(NOW, 0, NOW)).toBe(false);
  });
});

describe("the prompt frame", () => {
  const prompt = { promptId: "prm_0123456789abcdefghij", featureKey: "huddle", featureId: "ftABC", question: "How is it?", showAfter: NOW, showBefore: NOW + DAY_MS, createdAt: NOW };

  /** What the Bucket browser SDK's `onMessage` does: parse the event data, then its `data` text. */
  function asBucketReadsIt(frame: string): unknown {
    const message = JSON.parse(frame.replace(/^data: /, "").trimEnd()) as { data: string };
    return JSON.parse(message.data);
  }

  it("is one default message event whose data carries the prompt as JSON text", () => {
    const frame = promptFrame("prompt_abc", prompt);
    expect(frame.endsWith("\n\n")).toBe(true);
    expect(frame.split("\n").filter((line) => line !== "")).toHaveLength(1);
    expect(asBucketReadsIt(frame)).toEqual({ question: "How is it?", showAfter: NOW, showBefore: NOW + DAY_MS, promptId: prompt.promptId, featureId: "ftABC" });
    expect(JSON.parse(frame.slice(6))).toMatchObject({ name: "prompt", channel: "prompt_abc" });
  });

  it("names no channel on a shared live-update stream", () => {
    expect(JSON.parse(promptFrame("", prompt).slice(6))).not.toHaveProperty("channel");
  });
});
