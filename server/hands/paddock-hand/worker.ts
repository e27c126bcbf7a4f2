import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import { BRAIN_TOOLS, HAND_TOOLS } from '~/lib/tools';
import { type HandLimits, Workspace, runTool } from '~/server/hands/paddock-hand/tools';
import type { SessionMounts } from '~/server/hands/mount-port';
import { apiSessionMounts, newWorkerMountCache } from '~/server/hands/paddock-hand/worker-mounts';

/** Runs one of the six tools for a session: in a sandbox hand of its own, or on a plain folder. */
export type SessionToolRunner = (name: string, input: unknown, signal?: AbortSignal) => Promise<string>;

/** paddock-hand's six tools as the SDK worker's runnable tools, each run by `run`. */
export function handRunnableTools(run: SessionToolRunner): BetaRunnableTool[] {
  return HAND_TOOLS.map((name) => {
    const spec = BRAIN_TOOLS.find((t) => t.name === name)!;
    const { hand: _hand, ...properties } = (spec.input_schema.properties ?? {});
    return {
      type: 'custom',
      name,
      description: spec.description,
      input_schema: { ...spec.input_schema, type: 'object', properties },
      parse: (input: unknown) => input,
      run: (input: unknown, context?: { signal?: AbortSignal }) => run(name, input, context?.signal),
    } as BetaRunnableTool;
  });
}

/** Where a worker runs each session's tools: `runnerFor` once per work item, `close` when it stops. */
export interface WorkerHands {
  /** `mounts`: the session's memory stores and skills, placed around each call (hands that place them). */
  runnerFor(sessionId: string, mounts?: SessionMounts): SessionToolRunner;
  /**
   * True when these hands place the session's mounts themselves (a sandbox: its own /mnt); else
   * the SDK's worker keeps memory stores at their mount paths on this machine, as its tools do.
   */
  readonly placesMounts: boolean;
  close(): Promise<void>;
}

/** A session's folder name under the worker's root (its id, nothing else). */
export const sessionFolder = (sessionId: string) => sessionId.replace(/[^A-Za-z0-9_-]/g, '_');

/**
 * Unsandboxed (`--unsandboxed`): each session's tools run as this worker's user on `<root>/<session
 * id>`, as paddock-hand on a developer's machine does. Only for machines that cannot sandbox.
 */
export function plainWorkerHands(root: string, limits: Partial<HandLimits> = {}): WorkerHands {
  const workspaces = new Map<string, Workspace>();
  return {
    placesMounts: false,
    runnerFor(sessionId) {
      const id = sessionFolder(sessionId);
      let ws = workspaces.get(id);
      if (!ws) {
        const dir = path.join(root, id);
        mkdirSync(dir, { recursive: true });
        ws = new Workspace(dir, limits);
        workspaces.set(id, ws);
      }
      const w = ws;
      return (name, input, signal) => runTool(w, name, input, signal);
    },
    close: () => {
      for (const ws of workspaces.values()) ws.dispose();
      return Promise.resolve();
    },
  };
}

export interface HandWorkerOptions {
  /** Paddock's address (the /v1 API's base URL). */
  baseURL: string;
  environmentId: string;
  environmentKey: string;
  /** Each session gets a folder under `root`, kept across its work items. */
  root: string;
  hands: WorkerHands;
  workerId?: string;
  signal?: AbortSignal;
}

/**
 * `paddock-hand worker`: the official SDK's worker loop (poll, ack, heartbeat, answer the
 * session's calls with user.tool_result, stop) with paddock-hand's tools instead of the SDK's, each
 * session's run by `hands` (a sandbox hand per session by default: worker-cli.ts).
 */
export async function runHandWorker(o: HandWorkerOptions): Promise<void> {
  const client = new Anthropic({ apiKey: null, authToken: o.environmentKey, baseURL: o.baseURL });
  const cache = newWorkerMountCache();
  // Each item's client carries that item's token: its mounts are read and written with it.
  const tools = (ctx: { session?: { id: string }; client?: Anthropic }): BetaRunnableTool[] => {
    const mounts = o.hands.placesMounts && ctx.client ? apiSessionMounts(ctx.client, cache) : undefined;
    return handRunnableTools(o.hands.runnerFor(ctx.session?.id ?? 'session', mounts));
  };
  // Hands that place memory themselves: the SDK's copy at the stores' paths on this machine is not made.
  const memory = o.hands.placesMounts ? { memorySyncIntervalMs: null } : {};
  try {
    await client.beta.environments.work.worker({ environmentId: o.environmentId, environmentKey: o.environmentKey, workdir: o.root, tools, ...memory, ...(o.workerId ? { workerId: o.workerId } : {}) }).run(o.signal);
  } finally {
    await o.hands.close();
  }
}
