/** A JSON answer from the server under test. */
export interface JsonReply<T = Record<string, any>> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  rawBody?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /**
   * Whether a retryable refusal (503 or 429 with `Retry-After`) is waited out and the request sent again, as the
   * SDKs' callers do (default). A test whose subject is the refusal itself says `retry: false`.
   */
  retry?: boolean;
}

/** The longest Retry-After waited out; a longer one (a sign-in throttle's window) is answered as it is. */
const MAX_RETRY_AFTER_S = 5;
/** How often one request is sent again before its refusal is answered. */
const MAX_RETRIES = 10;

/** The seconds a retryable refusal asks to wait, or undefined when the reply is not one to wait out. */
function retryAfter(reply: JsonReply<unknown>): number | undefined {
  if (reply.status !== 503 && reply.status !== 429) return undefined;
  const header = reply.headers.get("retry-after");
  const seconds = header === null || header.trim() === "" ? Number.NaN : Number(header);
  return Number.isInteger(seconds) && seconds >= 0 && seconds <= MAX_RETRY_AFTER_S ? seconds : undefined;
}

/**
 * One call to the server under test, its answer parsed as JSON. Under load the service sheds work with retryable
 * refusals (a projection behind, a full queue); like an SDK's caller, this waits as told and tries again.
 */
export async function request<T = Record<string, any>>(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<JsonReply<T>> {
  for (let retries = 0; ; retries++) {
    const reply = await requestOnce<T>(baseUrl, method, path, options);
    const wait = options.retry === false || retries === MAX_RETRIES ? undefined : retryAfter(reply);
    if (wait === undefined) return reply;
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
  }
}

async function requestOnce<T>(baseUrl: string, method: string, path: string, options: RequestOptions): Promise<JsonReply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let payload: string | Buffer | undefined;
  if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers["content-type"] = options.contentType ?? "application/json";
  } else if (options.rawBody !== undefined) {
    payload = options.rawBody;
    if (options.contentType) headers["content-type"] = options.contentType;
  }
  const response = await fetch(baseUrl + path, { method, headers, body: payload });
  const text = await response.text();
  let body: T;
  try {
    body = (text === "" ? {} : JSON.parse(text)) as T;
  } catch {
    throw new Error(`${method} ${path} answered ${response.status} with non-JSON: ${text.slice(0, 200)}`);
  }
  return { status: response.status, headers: response.headers, body };
}

/** A management-API call with the server's admin token, and a JSON body when one is given. */
export function adminRequest(server: { url: string; adminToken: string }, method: string, path: string, body?: unknown): Promise<JsonReply> {
  return request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
}

/** Creates an app through the management API and returns its clear-text keys. */
export async function createApp(baseUrl: string, adminToken: string, name = "Test app") {
  const reply = await request<{ success: boolean; app: { id: string; trackingKey: string; defaultEnvironmentId: string; environments: { id: string; name: string; publishableKey: string; secretKey: string }[] } }>(
    baseUrl,
    "POST",
    "/admin/apps",
    { token: adminToken, body: { name } },
  );
  if (reply.status !== 200) throw new Error(`create app failed: ${JSON.stringify(reply.body)}`);
  const app = reply.body.app;
  const production = app.environments.find((environment) => environment.name === "production")!;
  const development = app.environments.find((environment) => environment.name === "development")!;
  return { app, production, development };
}
