import 'server-only';
import type { ToolResultContent } from '~/lib/events';
import type { McpListedTool } from '~/lib/mcp-tools';

/**
 * What the harness holds to reach a session's MCP servers: no credential, no token, no URL.
 * The runtime hands it an implementation that mints a session token and calls the proxy, so
 * `server/harness/**` never imports the vault.
 */
export interface McpGateway {
  /** The server's tools; throws McpUpstreamError. */
  listTools(sessionId: string, server: string, signal?: AbortSignal): Promise<McpListedTool[]>;
  /** One call; an upstream tool error is `isError: true`, a failure to reach it throws McpUpstreamError. */
  callTool(sessionId: string, server: string, tool: string, input: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult>;
}

export interface McpCallResult {
  content: ToolResultContent[];
  isError: boolean;
}

export type McpFailureKind = 'authentication' | 'connection' | 'protocol';

/** Why an MCP server could not be used. The message names the server and never holds a token. */
/** An HTTP answer kept for a credential's validation: its body scrubbed of every credential and cut. */
export interface CapturedHttpResponse {
  status_code: number;
  content_type: string;
  body: string;
  body_truncated: boolean;
}

/** Where an upstream failure happened: connecting (`initialize`), the request itself, or an OAuth refresh. */
export interface McpFailureDetail {
  stage: 'connect' | 'call' | 'refresh';
  httpResponse?: CapturedHttpResponse;
}

export class McpUpstreamError extends Error {
  constructor(
    readonly kind: McpFailureKind,
    readonly server: string,
    message: string,
    readonly detail?: McpFailureDetail,
  ) {
    super(message);
    this.name = 'McpUpstreamError';
  }
}

export function isMcpUpstreamError(e: unknown): e is McpUpstreamError {
  return e instanceof Error && e.name === 'McpUpstreamError' && 'kind' in e && 'server' in e;
}
