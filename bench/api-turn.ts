/**
 * The Managed Agents API end to end, as a program sees it: the official SDK against /v1 (real
 * HTTP + SSE), one turn per session (user message → one bash call on a sandbox hand from the warm
 * pool → answer), a fake model answering in 20 ms. Send → first agent event and send → idle, for
 * sessions arriving back to back and for 20 at once.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { startApiServer } from '~/bench/api-server';
import { percentile } from '~/bench/stats';
import { Rows, ms, runIfMain, type Row } from '~/bench/table';
import type { RecordedRequest, ScriptedResponse } from '~/server/harness/testing/fake-messages-api';

process.env.PADDOCK_LOG_LEVEL ??= 'warn';
const MODEL_MS = 20;
const BACK_TO_BACK = Number(process.env.PADDOCK_BENCH_API_TURNS ?? 30);
const CONCURRENT = 20;

/** The model: a bash call for a new message, an answer once the result is in; 20 ms each. */
function script(req: RecordedRequest): ScriptedResponse {
  const last = JSON.stringify(req.body?.messages?.at(-1) ?? '');
  return last.includes('tool_result')
    ? { kind: 'message', delayMs: MODEL_MS, steps: [{ kind: 'text', text: 'done' }] }
    : { kind: 'message', delayMs: MODEL_MS, steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'echo hi' } }] };
}

interface Turn {
  firstAgentEvent: number;
  idle: number;
}

/** One turn, in a new session, or in `sessionId` (whose hand is then already live). */
async function oneTurn(client: Anthropic, sessionId?: string): Promise<Turn> {
  const session = sessionId ? { id: sessionId } : await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
  const stream = await client.beta.sessions.events.stream(session.id);
  const t0 = performance.now();
  await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'say hi from a shell' }] }] });
  let first = 0;
  for await (const e of stream) {
    if (!first && e.type.startsWith('agent.')) first = performance.now() - t0;
    if (e.type === 'session.status_idle') {
      if (e.stop_reason.type !== 'end_turn') throw new Error(`turn ended with ${e.stop_reason.type}`);
      const idle = performance.now() - t0;
      stream.controller.abort();
      return { firstAgentEvent: first, idle };
    }
    if (e.type === 'agent.tool_result' && e.is_error) throw new Error(`the bash call failed: ${JSON.stringify(e.content)}`);
  }
  throw new Error('stream ended before idle');
}

export async function runApiTurnBench(): Promise<Row[]> {
  const table = new Rows();
  const { client, config, close } = await startApiServer('api', script);
  try {
    await new Promise((r) => setTimeout(r, 3_000)); // the warm pool fills, as on a server that has been up a while
    const report = (label: string, turns: Turn[]) => {
      const first = turns.map((t) => t.firstAgentEvent);
      const idle = turns.map((t) => t.idle);
      table.add(`${label}: send → first agent event, p50 / p95`, `${ms(percentile(first, 50))} / ${ms(percentile(first, 95))}`);
      const p50 = percentile(idle, 50);
      const p95 = percentile(idle, 95);
      table.add(`${label}: send → idle (bash on a sandbox hand), p50`, ms(p50), '≤ 64 ms', p50 <= 64);
      table.add(`${label}: send → idle, p95`, ms(p95), '≤ 100 ms', p95 <= 100);
    };
    const sequential: Turn[] = [];
    for (let i = 0; i < BACK_TO_BACK; i++) sequential.push(await oneTurn(client));
    report(`${BACK_TO_BACK} new sessions back to back`, sequential);
    // The same turn again in one session: its hand is live, so this is Paddock's own time plus
    // the model's 2 × 20 ms and the command itself, with no hand start anywhere.
    const warm = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    await oneTurn(client, warm.id);
    await new Promise((r) => setTimeout(r, 3_000));
    const followUps: Turn[] = [];
    for (let i = 0; i < BACK_TO_BACK; i++) followUps.push(await oneTurn(client, warm.id));
    report(`${BACK_TO_BACK} follow-up turns in one session (hand live)`, followUps);
    await new Promise((r) => setTimeout(r, 3_000));
    report(`${CONCURRENT} sessions at once`, await Promise.all(Array.from({ length: CONCURRENT }, () => oneTurn(client))));
    table.add('fake model latency per request (2 requests per turn)', ms(MODEL_MS));
    table.add('warm pool size / live hands cap (PADDOCK_WARM_POOL / PADDOCK_MAX_LIVE_HANDS)', `${config.PADDOCK_WARM_POOL} / ${config.PADDOCK_MAX_LIVE_HANDS}`);
  } finally {
    await close();
  }
  return table.rows;
}

runIfMain(import.meta.url, runApiTurnBench);
