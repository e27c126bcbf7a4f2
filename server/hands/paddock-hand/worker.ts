import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import { BRAIN_TOOLS, HAND_TOOLS } from '~/lib/tools';
import { type HandLimits, Workspace, runTool } from '~/server/hands/paddock-hand/tools';

/** paddock-hand's six tools as the SDK worker's runnable tools, on one workspace. */
export function handRunnableTools(ws: Workspace): BetaRunnableTool[] {
  return HAND_TOOLS.map((name) => {
    const spec = BRAIN_TOOLS.find((t) => t.name === name)!;
    const { hand: _hand, ...properties } = (spec.input_schema.properties ?? {});
    return {
      type: 'custom',
      name,
      description: spec.description,
      input_schema: { ...spec.input_schema, type: 'object', properties },
      parse: (input: unknown) => input,
      run: (input: unknown, context?: { signal?: AbortSignal }) => runTool(ws, name, input, context?.signal),
    } as BetaRunnableTool;
  });
}

export interface HandWorkerOptions {
  /** Paddock's address (the /v1 API's base URL). */
  baseURL: string;
  environmentId: string;
  environmentKey: string;
  /** Each session gets `<root>/<session id>`, kept across its work items. */
  root: string;
  workerId?: string;
  limits?: Partial<HandLimits>;
  signal?: AbortSignal;
}

/**
 * `paddock-hand worker`: the official SDK's worker loop (poll, ack, heartbeat, answer the
 * session's calls with user.tool_result, stop) with paddock-hand's tools instead of the SDK's, each
 * session in its own workspace folder under `root`.
 */
export async function runHandWorker(o: HandWorkerOptions): Promise<void> {
  const client = new Anthropic({ apiKey: null, authToken: o.environmentKey, baseURL: o.baseURL });
  const workspaces = new Map<string, Workspace>();
  const tools = (ctx: { session?: { id: string } }): BetaRunnableTool[] => {
    const id = (ctx.session?.id ?? 'session').replace(/[^A-Za-z0-9_-]/g, '_');
    let ws = workspaces.get(id);
    if (!ws) {
      const dir = path.join(o.root, id);
      mkdirSync(dir, { recursive: true });
      ws = new Workspace(dir, o.limits);
      workspaces.set(id, ws);
    }
    return handRunnableTools(ws);
  };
  try {
    await client.beta.environments.work.worker({ environmentId: o.environmentId, environmentKey: o.environmentKey, workdir: o.root, tools, ...(o.workerId ? { workerId: o.workerId } : {}) }).run(o.signal);
  } finally {
    for (const ws of workspaces.values()) ws.dispose();
  }
}
