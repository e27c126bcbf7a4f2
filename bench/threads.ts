/**
 * Session threads (multiagent): a coordinator delegating to 5 agents, each making 10 tool calls,
 * against the same 50 calls made by one agent in one thread; and the harness's overhead per
 * thread turn (a model that answers at once: what is left is the harness and the store).
 *
 * The model is in-process (a scripted ModelClient that waits `latencyMs` per request, as a real
 * one would take): the wall time then shows what running threads concurrently under one lease
 * buys, and the 0 ms rows what each thread turn costs. Memory hands, a durable SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SessionAgent, ThreadAgent } from '~/lib/agent';
import { sleep } from '~/lib/sleep';
import { AgentToolsParams, normalizeTools } from '~/lib/toolset';
import { type Row, Rows, ms, runIfMain } from '~/bench/table';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import { HandRegistry } from '~/server/hands/registry';
import type { ModelRequest } from '~/server/harness/core/context';
import type { ModelClient, ModelTurn, TurnBlock } from '~/server/harness/core/model-client';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

const CHILDREN = 5;
const CALLS = 10;

const tools = normalizeTools(AgentToolsParams.parse([{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_allow' } } }]));
const member = (name: string): ThreadAgent => ({ id: `agent_${name}`, type: 'agent', version: 1, name, description: null, model: { id: 'bench' }, system: `bench ${name}`, tools, mcp_servers: [], skills: [], execution_identity: null, context_policy: { type: 'full' } });
const names = Array.from({ length: CHILDREN }, (_, i) => `w${i}`);

/** How many tool results the request carries, and whether it is the coordinator's (it may delegate). */
function stepOf(req: ModelRequest): { results: number; reports: number; system: string } {
  let results = 0;
  let reports = 0;
  for (const m of req.messages) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type === 'tool_result') results++;
      if (b.type === 'text' && b.text.startsWith('[Message from ')) reports++;
    }
  }
  return { results, reports, system: JSON.stringify(req.system) };
}

function scriptedModel(latencyMs: number, counter: { requests: number }): ModelClient {
  return {
    label: 'bench model',
    model: 'bench',
    isDemo: false,
    async stream(req, { signal }): Promise<ModelTurn> {
      counter.requests++;
      if (latencyMs > 0) await sleep(latencyMs, signal);
      const { results, reports, system } = stepOf(req);
      let content: TurnBlock[];
      const call = (i: number, input: Record<string, unknown>, name = 'write'): TurnBlock => ({ type: 'tool_use', id: `toolu_${results}_${i}`, name, input });
      if (system.includes('bench lead')) {
        // Delegates all five at once, then waits for every report.
        if (results === 0) content = names.map((n, i) => call(i, { agent: n, message: `make ${CALLS} calls` }, 'send_to_agent'));
        else content = [{ type: 'text', text: reports >= CHILDREN ? 'all reported' : `waiting (${reports})` }];
      } else {
        const me = /bench (\w+)/.exec(system)?.[1] ?? 'solo';
        const total = me === 'solo' ? CHILDREN * CALLS : CALLS;
        content = results < total ? [call(0, { file_path: `${me}/f${results}.txt`, content: 'x' })] : [{ type: 'text', text: `${me} done` }];
      }
      return { content, stopReason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn', ttftMs: latencyMs, usage: { input_tokens: 0, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } };
    },
  };
}

async function timeRun(store: SessionStore, agent: SessionAgent, latencyMs: number): Promise<{ ms: number; requests: number; events: number }> {
  const live = new LiveBus();
  const counter = { requests: 0 };
  const harness = new Harness({ store, live, hands: new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' }), model: scriptedModel(latencyMs, counter), leaseTtlMs: 15_000 });
  try {
    const s = await store.createSession({ agent });
    await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'go' }] });
    const t0 = performance.now();
    // A run that saw new work at its end wakes itself again: wake until the log stops growing.
    let before = -1;
    for (;;) {
      await harness.wake(s.id);
      const n = (await store.getEvents(s.id)).length;
      if (n === before) break;
      before = n;
    }
    return { ms: performance.now() - t0, requests: counter.requests, events: before };
  } finally {
    await harness.close();
  }
}

export async function runThreadsBench(): Promise<Row[]> {
  const table = new Rows();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-bench-threads-'));
  const store = await openSqliteStore({ file: path.join(dir, 'threads.sqlite') });
  try {
    const solo: SessionAgent = { ...member('solo'), multiagent: null };
    const lead: SessionAgent = { ...member('lead'), multiagent: { type: 'coordinator', agents: names.map(member) } };
    await timeRun(store, solo, 0); // warm-up: JIT, zod, statements
    for (const latency of [50, 0]) {
      const one = await timeRun(store, solo, latency);
      const many = await timeRun(store, lead, latency);
      const label = latency > 0 ? `model ${latency} ms/request` : 'model answers at once';
      table.add(`${CHILDREN * CALLS} calls in one thread (${label})`, `${ms(one.ms)} (${one.requests} requests)`);
      table.add(`coordinator + ${CHILDREN} threads × ${CALLS} calls (${label})`, `${ms(many.ms)} (${many.requests} requests)`, latency > 0 ? '< one thread' : '—', latency > 0 ? many.ms < one.ms : null);
      if (latency === 0) {
        table.add('harness overhead per turn, one thread', ms(one.ms / one.requests));
        table.add(`harness overhead per thread turn, ${CHILDREN} threads`, ms(many.ms / many.requests));
      }
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return table.rows;
}

runIfMain(import.meta.url, runThreadsBench);
