import { z } from 'zod';

/**
 * What `mcp.tools_listed` stores: a session's MCP servers' tools, listed once, so every wake
 * offers the same definitions. Apart from mcp-tools.ts so the event schema needs only zod.
 */
export const McpListedTool = z.object({
  name: z.string().min(1).max(128),
  description: z.string().max(10_000),
  input_schema: z.record(z.string(), z.unknown()),
});
export type McpListedTool = z.infer<typeof McpListedTool>;

export const McpServerListing = z.object({
  mcp_server_name: z.string().min(1).max(64),
  tools: z.array(McpListedTool).max(1000),
  /** Set when the server could not be listed: the session goes on without its tools. */
  error: z.enum(['authentication', 'connection', 'protocol']).optional(),
});
export type McpServerListing = z.infer<typeof McpServerListing>;
