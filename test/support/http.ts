/** A JSON answer from the server under test. */
export interface JsonReply<T = Record<string, any>> {
  status: number;
  headers: Headers;
  body: T;
}

export async function request<T = Record<string, any>>(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string | Buffer; contentType?: string; headers?: Record<string, string> } = {},
): Promise<JsonReply<T>> {
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
