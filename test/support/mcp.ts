/** An MCP client from the official SDK over real HTTP, for the MCP suites. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";

export interface ToolReply {
  isError: boolean;
  text: string;
  /** The structured answer (or `{error}` for an isError result). */
  value: any;
}

export interface McpSession {
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<ToolReply>;
  close(): Promise<void>;
}

/** Connects to `url` (the MCP endpoint) with a Bearer token, or with an OAuth provider, and initialises. */
export async function connectMcp(url: string, auth: { token: string } | { authProvider: OAuthClientProvider }): Promise<McpSession> {
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    "token" in auth ? { requestInit: { headers: { authorization: `Bearer ${auth.token}` } } } : { authProvider: auth.authProvider },
  );
  const client = new Client({ name: "switchyard-test", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    async call(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: unknown };
      const text = result.content[0]?.text ?? "";
      return { isError: result.isError === true, text, value: result.structuredContent ?? JSON.parse(text) };
    },
    close: () => client.close(),
  };
}
