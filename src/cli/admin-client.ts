/** A thin client of the management API, used by the CLI. `token`: the admin token or an API token (none for a password reset). */
export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string | undefined,
  ) {}

  async call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: { ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new Error(`${method} ${path}: HTTP ${response.status}, not JSON: ${text.slice(0, 200)}`);
    }
    if (!response.ok || parsed.success !== true) {
      throw new Error(`${method} ${path}: HTTP ${response.status} ${JSON.stringify(parsed.error ?? parsed)}`);
    }
    return parsed;
  }
}
