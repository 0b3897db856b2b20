/**
 * Remote context reads what its caller was told is stored (API.md §3, §4): a user or company call is acknowledged
 * once logged and projected a little later, so an evaluation arriving in between — a script's next command, a
 * browser SDK that posted the company before fetching flags — would miss the attributes it just sent. An evaluation
 * in an environment with such a call acknowledged and not yet projected waits for that projection first. Only then:
 * with none pending (nearly always) it costs one map lookup, and event traffic never makes evaluation wait.
 */
export class AttributeWrites {
  /** Environment → the sequence number of its last acknowledged user or company call not known to be projected. */
  private readonly pending = new Map<string, number>();
  private sequence = 0;

  /**
   * `caughtUp` resolves once everything acknowledged before the call is projected (undefined: it already is).
   * `boundMs` caps a wait: past it the evaluation goes on with what is stored, as the contract lets remote context lag.
   */
  constructor(
    private readonly caughtUp: () => Promise<void> | undefined,
    private readonly boundMs: number,
  ) {}

  /** A call that may change stored attributes was acknowledged for `environmentId`. */
  acknowledged(environmentId: string): void {
    this.pending.set(environmentId, ++this.sequence);
  }

  /** Resolves (never rejects) once the environment's acknowledged attribute changes are projected; undefined when none wait. */
  projected(environmentId: string): Promise<void> | undefined {
    const sequence = this.pending.get(environmentId);
    if (sequence === undefined) return undefined;
    // Only what was pending when the wait began is settled by it: a call acknowledged meanwhile stays pending.
    const settle = () => {
      if (this.pending.get(environmentId) === sequence) this.pending.delete(environmentId);
    };
    let waiting: Promise<void> | undefined;
    try {
      waiting = this.caughtUp();
    } catch {
      return undefined;
    }
    if (waiting === undefined) {
      settle();
      return undefined;
    }
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.boundMs);
    });
    return Promise.race([waiting.then(settle), bound]).then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
  }
}

/**
 * Whether a tracking call may change a user's or company's attributes: `user` and `company` always, a bulk when its
 * text holds the string "user" or "company" (a type; false positives only cost a short wait), nothing else.
 */
export function mayChangeAttributes(call: string, body: Uint8Array | null): boolean {
  if (call === "user" || call === "company") return true;
  if (call !== "bulk" || body === null) return false;
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return bytes.includes('"user"') || bytes.includes('"company"');
}
