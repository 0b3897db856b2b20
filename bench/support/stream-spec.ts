/** A soak stream as it travels to the process that sends it: its kind, its keys and where its numbering starts. */
export type StreamKind = "evaluation" | "event" | "bulk";

export interface StreamSpec {
  kind: StreamKind;
  /** Keys of the seeded app; the baseline server needs none. */
  publishableKey: string;
  secretKey: string;
  /** Numbering of users and bodies starts here, so that every window sends new ones. */
  sequenceStart: number;
}
