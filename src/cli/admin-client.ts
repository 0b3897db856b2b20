/** A refusal by the service: its error envelope as it came, for commands that print the answer itself. */
export class AnswerError extends Error {
  constructor(
    readonly answer: unknown,
    message: string = JSON.stringify(answer),
  ) {
    super(message);
  }
}

/** A thin client of the management API, used by the CLI. `token`: the admin token or an API token (none for a password reset). */
export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string | undefined,
  ) {}

  /** `body` is sent as JSON; a string given as `rawBody` is sent as written (a document whose problems the service names by path). */
  async call(method: string, path: string, body?: unknown, rawBody?: string): Promise<Record<string, unknown>> {
    const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: { ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }), ...(payload === undefined ? {} : { "content-type": "application/json" }) },
      body: payload,
    });
    const text = await response.text();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new Error(`${method} ${path}: HTTP ${response.status}, not JSON: ${text.slice(0, 200)}`);
    }
    if (!response.ok || parsed.success !== true) {
      throw new AnswerError(parsed, `${method} ${path}: HTTP ${response.status} ${JSON.stringify(parsed.error ?? parsed)}`);
    }
    return parsed;
  }
}
