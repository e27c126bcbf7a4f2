/**
 * Issue 25's scale figure: many sessions at once on this machine, each running a short bash loop
 * (five lines, 0.2 s apart) on its own sandbox hand, through the official SDK against /v1, the
 * model faked at 20 ms. How many hands started, the peak memory of the server and every hand
 * process it started, the p95 tool latency, and whether every session finished (none starved).
 *
 * Part of `npm run bench` as `crowd` (PADDOCK_BENCH_CROWD sessions, default 200); alone:
 *   node --conditions=react-server --import tsx bench/crowd.ts
 */
import type Anthropic from '@anthropic-ai/sdk';
import { startApiServer } from '~/bench/api-server';
import { descendants, memoryKb } from '~/bench/proc';
import { percentile } from '~/bench/stats';
import { Rows, ms, runIfMain, type Row } from '~/bench/table';
import type { RecordedRequest, ScriptedResponse } from '~/server/harness/testing/fake-messages-api';

process.env.PADDOCK_LOG_LEVEL ??= 'error';
const SESSIONS = Number(process.env.PADDOCK_BENCH_CROWD ?? 200);
const LOOP = 'for i in 1 2 3 4 5; do echo "line $i"; sleep 0.2; done';
/** A session not idle by then is starved. */
const DEADLINE_MS = 10 * 60_000;

function script(req: RecordedRequest): ScriptedResponse {
  const last = JSON.stringify(req.body?.messages?.at(-1) ?? '');
  return last.includes('tool_result')
    ? { kind: 'message', delayMs: 20, steps: [{ kind: 'text', text: 'done' }] }
    : { kind: 'message', delayMs: 20, steps: [{ kind: 'tool_use', name: 'bash', input: { command: LOOP } }] };
}

interface Outcome {
  sessionId: string | null;
  idleMs: number;
  toolMs: number;
  ok: boolean;
}

async function oneSession(client: Anthropic): Promise<Outcome> {
  const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
  const stream = await client.beta.sessions.events.stream(session.id);
  const t0 = performance.now();
  await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'count to five in a shell' }] }] });
  let toolStart = 0;
  let toolMs = 0;
  let ok = true;
  for await (const e of stream) {
    if (e.type === 'agent.tool_use') toolStart = performance.now();
    if (e.type === 'agent.tool_result') {
      toolMs = performance.now() - toolStart;
      ok = !e.is_error && JSON.stringify(e.content).includes('line 5');
    }
    if (e.type === 'session.status_idle') {
      stream.controller.abort();
      return { sessionId: session.id, idleMs: performance.now() - t0, toolMs, ok: ok && e.stop_reason.type === 'end_turn' };
    }
  }
  return { sessionId: session.id, idleMs: performance.now() - t0, toolMs, ok: false };
}

export async function runCrowdBench(): Promise<Row[]> {
  const table = new Rows();
  const { client, config, store, close } = await startApiServer('crowd', script, { maxRetries: 2, timeout: DEADLINE_MS });
  // Peak memory of this process and everything it started (launchers, bwrap, paddock-hand, socat).
  let peakRssKb = 0;
  let peakPssKb = 0;
  let peakProcesses = 0;
  const sample = () => {
    const tree = [process.pid, ...descendants(process.pid)].map(memoryKb);
    peakRssKb = Math.max(peakRssKb, tree.reduce((s, m) => s + m.rss, 0));
    peakPssKb = Math.max(peakPssKb, tree.reduce((s, m) => s + m.pss, 0));
    peakProcesses = Math.max(peakProcesses, tree.length);
  };
  const sampler = setInterval(sample, 500);
  const t0 = performance.now();
  try {
    const outcomes = await Promise.all(Array.from({ length: SESSIONS }, () => oneSession(client).catch((): Outcome => ({ sessionId: null, idleMs: DEADLINE_MS, toolMs: 0, ok: false }))));
    const wallMs = performance.now() - t0;
    sample();
    const finished = outcomes.filter((o) => o.ok);
    // From the sessions' logs: every hand a session got, and those the live cap suspended.
    let provisioned = 0;
    let suspended = 0;
    for (const o of outcomes) {
      if (!o.sessionId) continue;
      const events = await store.getEvents(o.sessionId, { types: ['hand.provisioned', 'hand.suspended'] });
      provisioned += events.filter((e) => e.type === 'hand.provisioned').length;
      suspended += events.filter((e) => e.type === 'hand.suspended').length;
    }
    table.add(`${SESSIONS} sessions at once, a 1 s bash loop each: finished (none starved)`, `${finished.length} / ${SESSIONS}`, `${SESSIONS} / ${SESSIONS}`, finished.length === SESSIONS);
    table.add('  hands started / suspended by the live cap (from the logs)', `${provisioned} / ${suspended}`);
    table.add('  all idle after (wall)', ms(wallMs));
    table.add('  send → idle, p50 / p95 / max', `${ms(percentile(outcomes.map((o) => o.idleMs), 50))} / ${ms(percentile(outcomes.map((o) => o.idleMs), 95))} / ${ms(Math.max(...outcomes.map((o) => o.idleMs)))}`);
    table.add("  tool latency with its hand's start (tool_use → tool_result, loop 1 s), p50 / p95", `${ms(percentile(finished.map((o) => o.toolMs), 50))} / ${ms(percentile(finished.map((o) => o.toolMs), 95))}`);
    table.add('  peak memory: server + its hand processes, RSS / PSS', `${(peakRssKb / 1024).toFixed(0)} / ${(peakPssKb / 1024).toFixed(0)} MB`);
    table.add('  peak processes in the tree', String(peakProcesses));
    table.add('  live hands cap / warm pool (PADDOCK_MAX_LIVE_HANDS / PADDOCK_WARM_POOL)', `${config.PADDOCK_MAX_LIVE_HANDS} / ${config.PADDOCK_WARM_POOL}`);
  } finally {
    clearInterval(sampler);
    await close();
  }
  return table.rows;
}

runIfMain(import.meta.url, runCrowdBench);
