/**
 * Wake time against log length: `wake()` → first model request for sessions of 1k, 10k and 100k
 * events, on SQLite and PostgreSQL, under a `window` context policy (the policy for sessions that
 * outgrow the model's context) and, for comparison, `full` (whose request shows every event, so
 * its wake cannot stay flat) and a wake with the checkpoint deleted (the whole log read, as before).
 *
 * Each log is written the way the harness writes one (turns with tool calls, each request's span
 * start recording where its window began), ends settled, and is then woken once by a real harness,
 * which finds nothing to do and stores its checkpoint, as every run does. What is timed is the next
 * wake, after a new user message, with the process's parse cache emptied first (as on an instance
 * that just took the session over).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ContextPolicy } from '~/lib/context-policy';
import { estimateTokens, normalizeContextPolicy } from '~/lib/context-policy';
import type { NewEvent } from '~/lib/events';
import { newId } from '~/lib/ids';
import { toolSpecsFor } from '~/lib/tools';
import { agentMessage, spanEnd, toolResult, toolUse, userMessage } from '~/bench/fixtures';
import { percentile } from '~/bench/stats';
import { type Row, Rows, ms } from '~/bench/table';
import { TimingModel, timeWake } from '~/bench/timing-model';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import { HandRegistry } from '~/server/hands/registry';
import { SYSTEM_PROMPT } from '~/server/harness/core/context';
import { shapeHistory } from '~/server/harness/core/context-shape';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import { LogView } from '~/server/harness/log-view';
import { SESSION_EVENTS_TOOL } from '~/server/harness/core/session-events';
import { policyAgent } from '~/server/harness/testing/policy-agent';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import type { SessionStore } from '~/server/session/store';
import { createTestDatabase } from '~/server/session/testing/pg-test-db';

const SIZES = [1_000, 10_000, 100_000];
/** Wakes timed per size (each after a new message: the log grows by a turn each time). */
const WAKES = 5;
const WINDOW = normalizeContextPolicy({ type: 'window' });
const FULL = normalizeContextPolicy({ type: 'full' });

/** A settled log of `total` events as the harness writes one under `policy`: ids chosen here, so spans and results point at them. */
function harnessLikeLog(total: number, policy: ContextPolicy): { events: NewEvent[]; ids: string[] } {
  const agent = policyAgent(policy);
  const tools = [...toolSpecsFor(agent.tools, []), ...(policy.type === 'full' ? [] : [SESSION_EVENTS_TOOL])];
  const fixedTokens = estimateTokens(agent.system ?? SYSTEM_PROMPT) + estimateTokens(JSON.stringify(tools));
  const events: NewEvent[] = [];
  const ids: string[] = [];
  // What the harness holds while writing: bounded by the window, so building 100k events stays linear.
  const view = LogView.of([], policy);
  const add = (e: NewEvent): string => {
    const id = newId('sevt');
    events.push(e);
    ids.push(id);
    view.append([{ ...e, id, seq: events.length, session_id: 'sesn_bench', processed_at: new Date().toISOString() }]);
    return id;
  };
  const spanStart = (): string => {
    const { windowFrom } = shapeHistory(view.events, policy, fixedTokens, view.fold.scale.value);
    return add({ type: 'span.model_request_start', model: 'claude-bench', ...(windowFrom !== undefined ? { window_from_seq: windowFrom } : {}) });
  };
  let n = 0;
  for (let episode = 0; events.length < total; episode++) {
    add(userMessage(`Task ${episode}: fix the reader and re-run the tests.`));
    add({ type: 'session.status_running' });
    for (let loop = 0; loop < 2 + (episode % 7) && total - events.length > 16; loop++) {
      const start = spanStart();
      add(agentMessage(n++));
      const calls = Array.from({ length: 1 + ((episode + loop) % 3) }, (_, i) => add(toolUse(loop + i)));
      add(spanEnd(start, 'tool_use'));
      for (const call of calls) add(toolResult(call));
    }
    const start = spanStart();
    add(agentMessage(n++));
    add(spanEnd(start, 'end_turn'));
    add({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });
  }
  return { events, ids };
}

async function write(store: SessionStore, id: string, log: { events: NewEvent[]; ids: string[] }): Promise<void> {
  for (let i = 0; i < log.events.length; i += 500) await store.emitEvents(id, log.events.slice(i, i + 500), { ids: log.ids.slice(i, i + 500) });
}

function harnessOn(store: SessionStore, model: TimingModel): Harness {
  const live = new LiveBus();
  const hands = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
  return new Harness({ store, model, hands, live, leaseTtlMs: 15_000 });
}

/** p50 and max of `WAKES` timed wakes of one session (cold parse cache each time); `dropCheckpoint` deletes it before each. */
async function timeWakes(store: KyselySessionStore, id: string, dropCheckpoint?: () => Promise<void>): Promise<{ p50: number; max: number }> {
  const model = new TimingModel();
  const samples: number[] = [];
  for (let i = 0; i < WAKES; i++) {
    await store.emitEvent(id, userMessage(`One more thing (${i}): also add a regression test for the EOF case.`));
    await dropCheckpoint?.();
    // The store's own cache of parsed payloads, emptied: a wake as a process that just started reads.
    store.forgetParsedPayloads();
    const harness = harnessOn(store, model);
    samples.push(await timeWake(harness, model, store, id));
    await harness.close();
  }
  return { p50: percentile(samples, 50), max: Math.max(...samples) };
}

export async function runWakeBench(): Promise<Row[]> {
  const table = new Rows();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-bench-wake-'));
  const db = await createTestDatabase('paddock_bench_wake');
  const stores: Array<{ name: string; store: KyselySessionStore; drop: (id: string) => Promise<void> }> = [];
  try {
    const sqlite = await openSqliteStore({ file: path.join(dir, 'wake.sqlite') });
    stores.push({ name: 'SQLite', store: sqlite, drop: (id) => sqlite.db.deleteFrom('session_checkpoints').where('session_id', '=', id).execute().then(() => undefined) });
    const pg = await openPostgresStore({ url: db.url });
    stores.push({ name: 'PostgreSQL', store: pg, drop: (id) => pg.db.deleteFrom('session_checkpoints').where('session_id', '=', id).execute().then(() => undefined) });
    // Warm up JIT, zod and the statement paths on both stores: a first size would otherwise pay for it.
    for (const { store } of stores) {
      const s = await store.createSession({ title: 'warm-up', agent: policyAgent(WINDOW) });
      await write(store, s.id, harnessLikeLog(3_000, WINDOW));
      await harnessOn(store, new TimingModel()).wake(s.id);
      await timeWakes(store, s.id);
    }
    for (const size of SIZES) {
      const logs = { window: harnessLikeLog(size, WINDOW), full: size <= 10_000 ? harnessLikeLog(size, FULL) : null };
      for (const { name, store, drop } of stores) {
        const settle = async (policy: ContextPolicy, log: { events: NewEvent[]; ids: string[] }) => {
          const s = await store.createSession({ title: `wake ${size}`, agent: policyAgent(policy) });
          await write(store, s.id, log);
          // A run that finds nothing to do stores the checkpoint, as every run does at its end.
          await harnessOn(store, new TimingModel()).wake(s.id);
          if (!(await store.readCheckpoint(s.id))) throw new Error(`no checkpoint stored for the ${size}-event session`);
          return s.id;
        };
        const label = `${(size / 1000).toFixed(0)}k events, ${name}`;
        const windowed = await settle(WINDOW, logs.window);
        const w = await timeWakes(store, windowed);
        const goal = size >= 100_000 ? 30 : 20;
        table.add(`wake() → first model request, ${label}, window, p50 of ${WAKES}`, ms(w.p50), size >= 10_000 ? `≤ ${goal} ms` : '—', size >= 10_000 ? w.p50 <= goal : null);
        table.add(`wake() → first model request, ${label}, window, max`, ms(w.max));
        const whole = await timeWakes(store, windowed, () => drop(windowed));
        table.add(`  same, checkpoint deleted (whole log read), p50`, ms(whole.p50));
        if (logs.full) {
          const f = await timeWakes(store, await settle(FULL, logs.full));
          table.add(`  same, context_policy full (every event shown), p50`, ms(f.p50));
        }
      }
    }
  } finally {
    for (const { store } of stores) await store.close();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
  return table.rows;
}

