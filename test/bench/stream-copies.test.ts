import { describe, expect, it } from "vitest";
import { differingSequences } from "../../bench/support/stream-copies.js";

describe("comparing NATS servers' copies of a stream", () => {
  it("names the sequences where two copies hold different messages, with what each server holds", () => {
    const copies = [
      { server: "n1", ids: ["a-1", "a-113", "a-56"] },
      { server: "n2", ids: ["a-1", "c-53", "b-114"] },
      { server: "n3", ids: ["a-1", "a-113", "b-114"] },
    ];
    expect(differingSequences(copies)).toEqual([
      { sequence: 2, held: "n1=a-113 n2=c-53 n3=a-113" },
      { sequence: 3, held: "n1=a-56 n2=b-114 n3=b-114" },
    ]);
  });

  it("does not count a copy that holds nothing yet (a server still catching up) as different", () => {
    const copies = [
      { server: "n1", ids: ["a-1", "-", "-"] },
      { server: "n2", ids: ["a-1", "b-1"] },
      { server: "n3", ids: ["a-1", "b-1", "c-1"] },
    ];
    expect(differingSequences(copies)).toEqual([]);
  });
});
