/**
 * One MCP request served by the official SDK: its low-level `Server` (tools declared with JSON Schemas converted from
 * our valibot schemas, so no zod in our code) behind its web-standard Streamable HTTP transport, which takes a
 * `Request` and gives a `Response` and so fits both front ends. Stateless (no `Mcp-Session-Id`): every POST stands
 * alone, so any node of a cluster can answer it; answers are plain JSON rather than an SSE stream.
 *
 * This module is loaded on the first `/api/mcp` request (mcp-routes.ts imports it dynamically): the SDK never loads
 * for a service nobody points an agent at, and never touches SDK traffic.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import type { ManagementPrincipal } from "../../accounts/principal.js";
import { authorize } from "../../accounts/permissions.js";
import type { RouteContext } from "../core/route.js";
import { findLoneSurrogate } from "../../schemas/well-formed.js";
import { ServiceError } from "../../errors/catalogue.js";
import { toValidationIssues } from "../../schemas/issues.js";
import type { Services } from "../core/services.js";
import { TOOLS, type Tool } from "./tools.js";

const SERVER_INFO = { name: "switchyard", version: "0.1.0" };
const INSTRUCTIONS =
  "Switchyard feature flags. list_apps first for app and environment ids; list_flags/get_flag to read; create_flag then set_flag_targeting to put new code behind a flag and roll it out (where an environment requires approval, set_flag_targeting proposes a change request instead; get_change_request follows it); list_flags marks stale flags to clean up.";

/** The tool list, JSON Schemas included, built once. */
let toolList: { name: string; title: string; description: string; inputSchema: Record<string, unknown> }[] | undefined;

function listTools() {
  toolList ??= TOOLS.map((tool) => {
    // `$schema` is noise to clients; trim/transform actions have no JSON Schema form and are checked on our side anyway.
    const { $schema: _schema, ...schema } = toJsonSchema(tool.input, { errorMode: "ignore" }) as Record<string, unknown>;
    return { name: tool.name, title: tool.title, description: tool.description, inputSchema: { type: "object", ...schema } };
  });
  return toolList;
}

function textResult(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> };
}

/** A caller's mistake as a tool result the agent can act on: the code, the reason, each field and what is wrong with it. */
function errorResult(error: ServiceError): CallToolResult {
  const fields = error.validationErrors?.map((issue) => `${issue.path || "(input)"}: ${issue.message}`) ?? [];
  const text = [`${error.code}: ${error.message}`, ...fields].join("\n");
  const body = { error: { code: error.code, message: error.message, ...(error.validationErrors ? { validationErrors: error.validationErrors } : {}) } };
  return { content: [{ type: "text", text }], structuredContent: body, isError: true };
}

async function callTool(context: RouteContext<Services>, principal: ManagementPrincipal, name: string, args: unknown): Promise<CallToolResult> {
  const tool: Tool | undefined = TOOLS.find((candidate) => candidate.name === name);
  if (!tool) return errorResult(new ServiceError("NOT_FOUND", `No tool ${name}; tools/list names them.`, [{ path: "name", message: "no such tool" }]));
  try {
    // The role table decides, as for the HTTP routes: a write tool counts as a state-changing request.
    authorize(principal, tool.permission, tool.permission === "read" ? "GET" : "POST");
    const illFormed = findLoneSurrogate(args);
    if (illFormed !== undefined) throw new ServiceError("INVALID_BODY", "The tool's arguments are invalid.", [illFormed]);
    const parsed = v.safeParse(tool.input, args ?? {});
    if (!parsed.success) throw new ServiceError("INVALID_BODY", "The tool's arguments are invalid.", toValidationIssues(parsed.issues));
    // The route is public (its 401 carries the OAuth challenge); the tools act as the authenticated caller.
    return textResult(await tool.run({ ...context, principal }, parsed.output));
  } catch (error) {
    if (error instanceof ServiceError && error.code !== "INTERNAL") return errorResult(error);
    context.services.log.error("mcp tool failed", { tool: name, error: String((error as Error)?.stack ?? error) });
    return { content: [{ type: "text", text: "INTERNAL: the tool failed on the server's side; try again." }], isError: true };
  }
}

/** Serves one MCP HTTP request for an authenticated caller. */
export async function serveMcp(request: Request, context: RouteContext<Services>, principal: ManagementPrincipal): Promise<Response> {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listTools() }));
  server.setRequestHandler(CallToolRequestSchema, (call) => callTool(context, principal, call.params.name, call.params.arguments));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request);
  } finally {
    void server.close();
  }
}
