import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '~/lib/events';
import { checkLogInvariants, checkThreadInvariants } from '~/server/harness/testing/log-invariants';
import type { SessionAgent, ThreadAgent } from '~/lib/agent';
import { AgentToolsParams, normalizeTools } from '~/lib/toolset';
import { WorkerProcess } from '~/server/harness/testing/worker-process';
import {
  type FakeMessagesApi,
  type RecordedRequest,
  type ScriptedResponse,
  errorResponse,
  startFakeMessagesApi,
} from '~/server/harness/testing/fake-messages-api';
import { type SqliteSessionStore, openSqliteStore } from '~/server/session/sqlite-store';
import { mulberry32 as prng } from '~/lib/prng';
import { newId } from '~/lib/ids';
import { logWebhooks } from '~/lib/log-webhooks';
import { loadMasterKey } from '~/server/vault/master-key';
import { WebhookKeys } from '~/server/vault/webhook-keys';
import { WebhookStore } from '~/server/webhooks/webhook-store';

/**
 * Chaos: a real harness process (chaos-worker.ts: the runtime `next start` builds, minus Next)
 * works a dozen multi-step sessions (and three multiagent ones, and three whose asks are outcomes
 * a grader judges: sent back once, then met) against the fake Messages API over real HTTP + SSE, and is
 * SIGKILLed at seeded random moments, then restarted, for PADDOCK_CHAOS_SECONDS (default 60).
 * Meanwhile this process keeps sending follow-up user messages to the SQLite file the worker
 * uses. Then one last worker runs everything to completion, and every log must be well-formed
 * (checkLogInvariants), hold every acknowledged user message, and end with its final answer;
 * and the webhooks the worker's ticker queued (killed mid-drain too) match the logs: one delivery
 * per webhook-worthy event, none missing, none twice.
 *
 * Knobs: PADDOCK_CHAOS_SECONDS, PADDOCK_CHAOS_SEED; PADDOCK_CHAOS_SCHEDULE replays a kill schedule
 * as printed by a run (`s340` kills 340 ms into a start-up, `r1820` 1,820 ms after the worker is
 * ready; comma-separated, used instead of the seed's, and the chaos lasts as long as it does);
 * PADDOCK_CHAOS_KEEP=1 keeps the temp dir (the
 * database and worker.log); PADDOCK_CHAOS_MIDTURN=0 sends follow-ups only to idle sessions (by
 * default they also arrive mid-turn, which once exposed a bug in decide(): see split-brain.test.ts,
 * "a user racing the harness").
 *
 * The fake runs in this process rather than as scripts/fake-anthropic.ts: its brain is a function
 * of each request (setFallback), which the standalone server's control routes cannot express.
 */
const CHAOS_SECONDS = Number(process.env.PADDOCK_CHAOS_SECONDS ?? 60);
const SEED = Number(process.env.PADDOCK_CHAOS_SEED ?? 0xc4a05);
const MIDTURN = process.env.PADDOCK_CHAOS_MIDTURN !== '0';
const SCHEDULE = process.env.PADDOCK_CHAOS_SCHEDULE ? parseSchedule(process.env.PADDOCK_CHAOS_SCHEDULE) : null;
const SESSIONS = 12;
/** Of which multiagent: a coordinator delegating each ask to two agents that use the session's one hand. */
const MULTI = 3;
/** And with outcomes: each ask is a `user.define_outcome`, graded (needs revision once, then satisfied) by grader requests the kills cut too. */
const OUTCOMES = 3;

/** One kill: during start-up (`s`, racing the worker's ready) or after it (`r`), so many ms in. */
interface Kill {
  during: 's' | 'r';
  ms: number;
}

function parseSchedule(text: string): Kill[] {
  return text.split(',').map((part) => {
    const m = /^([sr])(\d+)$/.exec(part.trim());
    if (!m) throw new Error(`PADDOCK_CHAOS_SCHEDULE: "${part}" is not s<ms> or r<ms>`);
    return { during: m[1] as Kill['during'], ms: Number(m[2]) };
  });
}

const formatSchedule = (kills: readonly Kill[]) => kills.map((k) => `${k.during}${k.ms}`).join(',');
/** Enough for the drain to finish every session even on a loaded CI machine. */
const DRAIN_TIMEOUT_MS = 60_000;



/** A stable small hash, so a request's pacing depends on what is asked, not on when. */
function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
const blocksOf = (m: unknown): Record<string, unknown>[] => (isRecord(m) && Array.isArray(m.content) ? m.content.filter(isRecord) : []);

const ASK = /chaos (s\d+ m\d+[ab]?): (?:take (\d+) tool steps|delegate)/;
const askText = (session: number, message: number, steps: number) => `chaos s${String(session).padStart(2, '0')} m${message}: take ${steps} tool steps, then say done`;
const delegateText = (session: number, message: number) => `chaos s${String(session).padStart(2, '0')} m${message}: delegate to alpha and beta, then say done`;
const REPORT = /\[Message from (alpha|beta) /;
/** The grader's system prompt starts so (core/outcome-grader.ts); the agent's revision is marked so the grader can tell. */
const GRADER = 'You are a strict grader.';
const REVISED = '(revised)';
const NEEDS_REVISION = 'it needs revision';

/** A multiagent session's agent: a coordinator with two agents on its roster (the whole toolset each, always allowed). */
function coordinatorAgent(): SessionAgent {
  const tools = normalizeTools(AgentToolsParams.parse([{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_allow' } } }]));
  const member = (name: string): ThreadAgent => ({ id: `agent_chaos_${name}`, type: 'agent', version: 1, name, description: null, model: { id: 'claude-chaos' }, system: `chaos ${name}`, tools, mcp_servers: [], skills: [], execution_identity: null, context_policy: { type: 'full' } });
  return { ...member('lead'), multiagent: { type: 'coordinator', agents: [member('alpha'), member('beta')] } };
}

/**
 * The brain, stateless like the real one: the newest ask in the conversation says how many tool
 * steps to take; the tool turns since it say how many are done. Steps cycle write → read → bash
 * (the memory hand has no shell: an error result, which the brain just reads and moves past).
 * Streams are paced to 200–600 ms a turn, so kills land mid-stream; a few requests fail (529) or
 * drop mid-stream, so retries and crashes mix.
 */
function chaosBrain(rng: () => number, stats: { failuresInjected: number; graderRequests: number }) {
  return (req: RecordedRequest): ScriptedResponse => {
    const messages = req.body?.messages ?? [];
    // The grader (its own context): the first work it sees needs a revision, the revised work is met.
    // Paced like a turn, so kills land mid-grading; never failed on purpose (an exhausted grader is a `failed` verdict).
    if (JSON.stringify(req.body?.system ?? '').includes(GRADER)) {
      const work = JSON.stringify(messages);
      const h = hash(work);
      const verdict = work.includes(REVISED) ? { result: 'satisfied', explanation: 'chaos: met' } : { result: 'needs_revision', explanation: 'chaos: say it again, marked as revised' };
      stats.graderRequests++;
      return { kind: 'message', steps: [{ kind: 'text', text: JSON.stringify(verdict) }], delayMs: 250 + (h % 500), chunkDelayMs: 15 };
    }
    let askAt = -1;
    let ask: RegExpExecArray | null = null;
    messages.forEach((m, i) => {
      if (!isRecord(m) || m.role !== 'user') return;
      for (const b of blocksOf(m)) {
        const hit = b.type === 'text' && typeof b.text === 'string' ? ASK.exec(b.text) : null;
        if (hit) {
          askAt = i;
          ask = hit;
        }
      }
    });
    if (!ask) return errorResponse(400, 'chaos brain: no ask in the conversation');
    const [, tag = '', stepsText] = ask as RegExpExecArray;
    const steps = Number(stepsText);
    const done = messages.slice(askAt + 1).filter((m) => isRecord(m) && m.role === 'assistant' && blocksOf(m).some((b) => b.type === 'tool_use')).length;
    if (stepsText === undefined) {
      // The coordinator: delegates both halves at once, then waits for both reports since the ask.
      if (done === 0) {
        const send = (agent: string, half: string) => ({ kind: 'tool_use' as const, name: 'send_to_agent', input: { agent, message: `chaos ${tag}${half}: take 2 tool steps, then say done` } });
        return { kind: 'message', steps: [{ kind: 'text', text: `${tag}: delegating` }, send('alpha', 'a'), send('beta', 'b')] };
      }
      const reports = new Set(messages.slice(askAt + 1).flatMap((m) => (isRecord(m) && m.role === 'user' ? blocksOf(m).flatMap((b) => (b.type === 'text' && typeof b.text === 'string' ? [REPORT.exec(b.text)?.[1]] : [])) : [])).filter(Boolean));
      return { kind: 'message', steps: [{ kind: 'text', text: reports.size >= 2 ? `done: ${tag} after delegating` : `${tag}: waiting for reports (${reports.size})` }] };
    }
    const h = hash(`${tag}:${done}`);
    const pacing = { delayMs: 40 + (h % 140), chunkDelayMs: 12 + ((h >>> 8) % 22) };

    const r = rng();
    if (r < 0.05) {
      stats.failuresInjected++;
      return errorResponse(529);
    }
    if (r < 0.08) {
      stats.failuresInjected++;
      return { kind: 'drop', afterSteps: 1, steps: [{ kind: 'text', text: `${tag} step ${done}: this stream is cut` }] };
    }
    // An outcome's work sent back by the grader is said again, marked as revised.
    const revised = messages.slice(askAt + 1).some((m) => isRecord(m) && m.role === 'user' && blocksOf(m).some((b) => b.type === 'text' && typeof b.text === 'string' && b.text.includes(NEEDS_REVISION)));
    if (done >= steps) return { kind: 'message', steps: [{ kind: 'text', text: `done: ${tag} after ${steps} tool steps${revised ? ` ${REVISED}` : ''}` }], ...pacing };
    const file = `${tag.replace(' ', '/')}/notes.txt`;
    const tool = (['write', 'read', 'bash'] as const)[done % 3]!;
    const input = tool === 'write' ? { path: file, content: `${tag} step ${done}` } : tool === 'read' ? { path: file } : { command: `cat ${file}` };
    return {
      kind: 'message',
      steps: [
        { kind: 'text', text: `${tag} step ${done + 1} of ${steps}: ${tool}` },
        { kind: 'tool_use', name: tool, input },
      ],
      ...pacing,
    };
  };
}

/** One line per event, with what a reader of a failure needs: texts, and who answers whom. */
function eventLine(e: StoredEvent): string {
  const text = (blocks: ReadonlyArray<{ type: string; text?: string }>) => blocks.map((b) => (b.type === 'text' ? JSON.stringify(b.text) : b.type)).join(' ');
  let detail = '';
  if (e.type === 'user.message' || e.type === 'agent.message') detail = text(e.content);
  else if (e.type === 'agent.tool_use') detail = `${e.name} ${JSON.stringify(e.input)}`;
  else if (e.type === 'agent.tool_result' || e.type === 'user.tool_result') detail = `→ ${e.tool_use_id}${e.is_error ? ' (error)' : ''}`;
  else if (e.type === 'span.model_request_end') detail = `→ ${e.model_request_start_id}${e.is_error ? ' (error)' : ''}`;
  return `  ${e.seq} ${e.type} ${e.id} ${e.processed_at} ${detail}`;
}

interface Ack {
  sessionId: string;
  event: StoredEvent;
}

describe('chaos: a harness process SIGKILLed at random moments', () => {
  let dir: string;
  let store: SqliteSessionStore;
  let fake: FakeMessagesApi;
  let worker: WorkerProcess | null = null;
  let webhooks: WebhookStore;
  let endpointId: string;
  const brainStats = { failuresInjected: 0, graderRequests: 0 };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-chaos-'));
    // Created and migrated here, before any worker runs, so no kill lands in a first migration.
    store = await openSqliteStore({ file: path.join(dir, 'paddock.sqlite') });
    // Every event, to an address the outbound policy refuses (nothing leaves the machine): the
    // worker's ticker drains the log's outbox into deliveries while it is being killed.
    webhooks = new WebhookStore(store.db, new WebhookKeys(loadMasterKey({ dataDir: dir })));
    endpointId = (await webhooks.createEndpoint({ url: 'http://127.0.0.1:9/hooks', description: null, event_types: [] })).id;
    // The fake adds one abort listener per paced stream to its shutdown signal; a dozen sessions
    // streaming at once is expected here, not a leak (Node warns above 10).
    setMaxListeners((SESSIONS + MULTI * 3 + OUTCOMES) * 4);
    fake = await startFakeMessagesApi({ fallback: chaosBrain(prng(SEED ^ 0xb1a1), brainStats) });
  });

  afterAll(async () => {
    await worker?.kill();
    await fake?.close();
    await store?.close();
    if (dir && process.env.PADDOCK_CHAOS_KEEP !== '1') fs.rmSync(dir, { recursive: true, force: true });
  });

  it(
    `keeps every log well-formed through ${CHAOS_SECONDS} s of kills, and finishes every session with its answer`,
    async ({ annotate }) => {
      const t0 = performance.now();
      // Separate streams, so the kill schedule follows from the seed whatever the follow-ups do.
      const killRng = prng(SEED);
      const askRng = prng(SEED ^ 0x5eed);
      const logFile = path.join(dir, 'worker.log');
      const { DATABASE_URL: _db, ANTHROPIC_AUTH_TOKEN: _token, ...inherited } = process.env;
      worker = new WorkerProcess(
        {
          ...inherited,
          PADDOCK_DATA_DIR: dir,
          PADDOCK_WORKSPACES_DIR: path.join(dir, 'workspaces'),
          ANTHROPIC_BASE_URL: fake.url,
          ANTHROPIC_API_KEY: 'chaos-test-key',
          PADDOCK_MODEL: 'claude-chaos',
          PADDOCK_DEFAULT_HAND: 'memory',
          PADDOCK_WARM_POOL: '0',
          PADDOCK_LEASE_TTL_MS: '500',
          PADDOCK_SWEEP_MS: '100',
          PADDOCK_RETRY_BASE_MS: '50',
          // Injected failures are rare and independent: with 8 retries none is ever exhausted.
          PADDOCK_MODEL_RETRIES: '8',
          PADDOCK_LOG_LEVEL: 'warn',
        },
        logFile,
      );
      const w = worker;

      // ── sessions, each with its first ask ──
      const acks: Ack[] = [];
      const asked = new Map<string, number>(); // session → messages sent
      const sessions: string[] = [];
      const multi = new Set<string>();
      const outcomes = new Set<string>();
      const ask = async (sessionId: string) => {
        const n = (asked.get(sessionId) ?? 0) + 1;
        const steps = 1 + Math.floor(askRng() * 4);
        const text = multi.has(sessionId) ? delegateText(sessions.indexOf(sessionId), n) : askText(sessions.indexOf(sessionId), n, steps);
        // An outcome session's ask is an outcome to meet (it starts work by itself).
        const event = outcomes.has(sessionId)
          ? await store.emitEvent(sessionId, { type: 'user.define_outcome', outcome_id: newId('outc'), description: text, rubric: { type: 'text', content: 'The answer says done.' }, max_iterations: 3 })
          : await store.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text }] });
        // Acknowledged: the store resolved, so the message is durable and must survive anything.
        acks.push({ sessionId, event });
        asked.set(sessionId, n);
      };
      for (let i = 0; i < SESSIONS; i++) sessions.push((await store.createSession({ title: `chaos ${i}` })).id);
      for (let i = 0; i < MULTI; i++) {
        const id = (await store.createSession({ title: `chaos multiagent ${i}`, agent: coordinatorAgent() })).id;
        sessions.push(id);
        multi.add(id);
      }
      for (let i = 0; i < OUTCOMES; i++) {
        const id = (await store.createSession({ title: `chaos outcome ${i}` })).id;
        sessions.push(id);
        outcomes.add(id);
      }
      for (const id of sessions) await ask(id);
      // A multiagent session is at rest when its last event is the primary's idle and every thread's last status is idle.
      const atRest = async (id: string) => {
        const log = await store.getEvents(id);
        const last = log.at(-1);
        if (last?.type !== 'session.status_idle') return false;
        const lastStatus = new Map<string, string>();
        for (const e of log) if (e.session_thread_id && e.type.startsWith('session.thread_')) lastStatus.set(e.session_thread_id, e.type);
        return [...lastStatus.values()].every((t) => t === 'session.thread_status_idle');
      };

      // ── follow-ups while the chaos runs ──
      let chaosOver = false;
      const followUps = (async () => {
        while (!chaosOver) {
          await sleep(300 + askRng() * 900);
          if (chaosOver) break;
          const id = sessions[Math.floor(askRng() * sessions.length)]!;
          const last = (await store.getEvents(id, { from: -1 }))[0];
          // A multiagent session gets a follow-up only at rest (its coordinator counts the reports since its newest ask).
          // An outcome session gets its next outcome once the last one is graded and it idles.
          if (multi.has(id) ? await atRest(id) : outcomes.has(id) ? last?.type === 'session.status_idle' : MIDTURN || last?.type === 'session.status_idle') await ask(id);
        }
      })();

      // ── the chaos: start, let it work a random while, SIGKILL, again ──
      let kills = 0;
      let killsBeforeReady = 0;
      /** Sessions caught in the middle of work (running or retrying) by a kill, summed over kills. */
      let cutMidWork = 0;
      /** Kills that landed while an outcome's grader request was in flight, summed over sessions. */
      let cutMidGrading = 0;
      const chaosEnd = performance.now() + CHAOS_SECONDS * 1000;
      const schedule: Kill[] = [];
      // The seed's schedule, or the one given to replay.
      const nextKill = (): Kill | null => {
        if (SCHEDULE) return SCHEDULE[schedule.length] ?? null;
        if (performance.now() >= chaosEnd) return null;
        // Sometimes during start-up: opening the store, the first sweep, the first acquires.
        return killRng() < 0.15 ? { during: 's', ms: Math.round(100 + killRng() * 1_400) } : { during: 'r', ms: Math.round(500 + killRng() * 2_500) };
      };
      try {
        for (let kill = nextKill(); kill; kill = nextKill()) {
          schedule.push(kill);
          const { ready } = w.start();
          if (kill.during === 's') {
            await Promise.race([sleep(kill.ms), ready]);
            killsBeforeReady++;
          } else {
            await ready;
            await sleep(kill.ms);
          }
          const rows = await Promise.all(sessions.map((id) => store.getSession(id)));
          cutMidWork += rows.filter((r) => r?.status === 'running' || r?.status === 'rescheduling').length;
          // An outcome session whose log ends in an evaluation's start (or heartbeat): its grader request is in flight.
          for (const id of outcomes) {
            const last = (await store.getEvents(id, { from: -1 }))[0]?.type;
            if (last === 'span.outcome_evaluation_start' || last === 'span.outcome_evaluation_ongoing') cutMidGrading++;
          }
          await w.kill();
          kills++;
        }
      } finally {
        chaosOver = true;
        await followUps;
      }

      // ── the drain: one worker, no kills, until every session has answered its last ask ──
      const chaosMs = performance.now() - t0;
      await w.start().ready;
      const finished = async (id: string) => {
        if (multi.has(id)) {
          const lastAsk = acks.filter((a) => a.sessionId === id).at(-1)!;
          const log = await store.getEvents(id, { from: -1 });
          return (await atRest(id)) && (log.at(-1)?.seq ?? 0) > lastAsk.event.seq;
        }
        const log = await store.getEvents(id, { from: -3 });
        const lastAsk = acks.filter((a) => a.sessionId === id).at(-1)!;
        return log.at(-1)?.type === 'session.status_idle' && (log.at(-1)?.seq ?? 0) > lastAsk.event.seq;
      };
      const drainEnd = performance.now() + DRAIN_TIMEOUT_MS;
      let unfinished = sessions;
      while (performance.now() < drainEnd) {
        const states = await Promise.all(sessions.map(async (id) => ((await finished(id)) ? null : id)));
        unfinished = states.filter((s): s is string => s !== null);
        if (unfinished.length === 0) break;
        await sleep(200);
      }
      await w.kill();
      const drainMs = performance.now() - t0 - chaosMs;

      // ── the verdict ──
      const requests = fake.requests.filter((r) => r.path === '/v1/messages');
      const problems: string[] = [];
      let events = 0;
      let violations = 0;
      let evaluations = 0;
      for (const [i, id] of sessions.entries()) {
        const log = await store.getEvents(id);
        events += log.length;
        // A multiagent session: the rules hold per thread.
        const found = multi.has(id) ? checkThreadInvariants(log) : checkLogInvariants(log);
        violations += found.length;
        for (const acked of acks.filter((a) => a.sessionId === id)) {
          const stored = log[acked.event.seq - 1];
          if (!stored || JSON.stringify(stored) !== JSON.stringify(acked.event)) {
            found.push(`[ack] acknowledged ${acked.event.type} ${acked.event.id} at seq ${acked.event.seq} is not in the log as acknowledged`);
          }
        }
        const primary = log.filter((e) => !e.session_thread_id);
        const lastAsk = [...primary].reverse().find((e) => e.type === 'user.message' || e.type === 'user.define_outcome');
        const askOf = (e: StoredEvent | undefined) => (e?.type === 'user.define_outcome' ? e.description : e?.type === 'user.message' && e.content[0]?.type === 'text' ? e.content[0].text : '');
        const tag = ASK.exec(askOf(lastAsk))?.[1];
        const answer = [...primary].reverse().find((e) => e.type === 'agent.message');
        const answered = answer?.type === 'agent.message' && answer.seq > (lastAsk?.seq ?? 0) && answer.content.some((c) => c.type === 'text' && c.text.startsWith(`done: ${tag} `));
        if (!answered) found.push(`[answer] no final "done: ${tag}" agent.message after the last ask (seq ${lastAsk?.seq})`);
        if (multi.has(id)) {
          // Every delegation reached its agent, and each agent's every ask was answered and reported.
          const sent = log.filter((e) => e.type === 'agent.thread_message_sent' && !e.session_thread_id).length;
          const received = log.filter((e) => e.type === 'agent.thread_message_received' && e.session_thread_id).length;
          const created = log.filter((e) => e.type === 'session.thread_created').length;
          if (sent !== received) found.push(`[delegation] ${sent} messages sent to threads, ${received} received`);
          if (created !== 2) found.push(`[threads] ${created} threads made, not 2 (a spawn repeated or lost)`);
        }
        if (outcomes.has(id)) {
          // Each outcome graded exactly as the grader answers: once sent back, then met; no verdict lost or stored twice.
          for (const defined of log.filter((e): e is Extract<StoredEvent, { type: 'user.define_outcome' }> => e.type === 'user.define_outcome')) {
            const verdicts = log.flatMap((e) => (e.type === 'span.outcome_evaluation_end' && e.outcome_id === defined.outcome_id ? [`${e.iteration}:${e.result}`] : []));
            const starts = log.filter((e) => e.type === 'span.outcome_evaluation_start' && e.outcome_id === defined.outcome_id).length;
            evaluations += verdicts.length;
            if (verdicts.join(' ') !== '0:needs_revision 1:satisfied') found.push(`[outcome] ${defined.outcome_id} verdicts ${verdicts.join(' ') || '(none)'}, not 0:needs_revision 1:satisfied`);
            if (starts !== verdicts.length) found.push(`[outcome] ${defined.outcome_id}: ${starts} evaluations started, ${verdicts.length} ended`);
          }
        }
        for (const acked of acks.filter((a) => a.sessionId === id)) {
          const text = askOf(acked.event);
          // A message is a whole text block; an outcome's description is inside the block that shows it.
          const needle = acked.event.type === 'user.define_outcome' ? text : JSON.stringify(text);
          if (!requests.some((r) => !JSON.stringify(r.body?.system ?? '').includes(GRADER) && JSON.stringify(r.body?.messages ?? []).includes(needle))) {
            found.push(`[seen] acknowledged ${acked.event.id} (seq ${acked.event.seq}, "${text}") never reached the model`);
          }
        }
        if (found.length > 0) {
          problems.push(`session ${i} ${id} (seed ${SEED}, schedule ${formatSchedule(schedule)}):\n  ${found.join('\n  ')}\n${log.map(eventLine).join('\n')}`);
        }
      }
      // Webhooks: what the killed workers left in the outbox is drained here; then each log
      // event's webhook events are queued exactly once (by its id), whatever was killed when.
      while ((await webhooks.drainOutbox(500)) > 0);
      const queued = await store.db.selectFrom('webhook_deliveries').select(['source_id', 'event_type']).where('endpoint_id', '=', endpointId).where('source_id', 'is not', null).execute();
      const expectedHooks: string[] = [];
      for (const id of sessions) for (const e of await store.getEvents(id)) for (const h of logWebhooks(e)) expectedHooks.push(`${e.id} ${h.type}`);
      const queuedHooks = queued.map((q) => `${q.source_id} ${q.event_type}`);
      const workerErrors = fs
        .readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"level":"error"'));
      const summary =
        `chaos (seed ${SEED}${MIDTURN ? ', mid-turn follow-ups' : ''}): ${kills} kills (${killsBeforeReady} during start-up) over ${Math.round(chaosMs / 1000)} s, ` +
        `${cutMidWork} sessions cut mid-work (${cutMidGrading} mid-grading), ${w.starts} worker starts, ${SESSIONS} sessions + ${MULTI} multiagent + ${OUTCOMES} with outcomes, ${acks.length} acknowledged user messages and outcomes, ${events} events, ` +
        `${requests.length} model requests (${brainStats.failuresInjected} failed on purpose, ${brainStats.graderRequests} grader requests for ${evaluations} evaluations), drain ${Math.round(drainMs / 1000)} s, ` +
        `${unfinished.length} unfinished, ${violations} violations, ${workerErrors.length} worker error logs`;
      await annotate(summary);
      process.stdout.write(`[chaos] ${summary}\n`);
      // What replays this run's kills: the follow-ups still come from the seed.
      process.stdout.write(`[chaos] replay: PADDOCK_CHAOS_SEED=${SEED} PADDOCK_CHAOS_SCHEDULE=${formatSchedule(schedule)}\n`);
      // For `npm run bench` (bench/soak.ts), which runs this test for longer and tabulates it.
      const figures = { seconds: Math.round(chaosMs / 1000), kills, killsBeforeReady, cutMidWork, cutMidGrading, sessions: SESSIONS, acks: acks.length, events, requests: requests.length, injected: brainStats.failuresInjected, drainMs: Math.round(drainMs), unfinished: unfinished.length, violations, workerErrors: workerErrors.length };
      process.stdout.write(`[chaos-json] ${JSON.stringify(figures)}\n`);

      expect(w.unexpectedExits).toEqual([]);
      expect(workerErrors.slice(0, 5)).toEqual([]);
      expect(problems.slice(0, 3).join('\n\n')).toBe('');
      expect(unfinished).toEqual([]);
      expect(expectedHooks.length).toBeGreaterThan(0);
      expect(queuedHooks.sort()).toEqual(expectedHooks.sort());
      // Not vacuous: there were kills, and they landed while sessions were mid-way.
      // A kill comes every 0.5–3 s after the worker is ready, and a loaded machine starts workers
      // slower: a floor well under the expected count (~CHAOS_SECONDS / 3), so load never fails it.
      expect(kills).toBeGreaterThanOrEqual(SCHEDULE ? SCHEDULE.length : Math.max(3, Math.floor(CHAOS_SECONDS / 12)));
      expect(cutMidWork).toBeGreaterThan(0);
    },
    (CHAOS_SECONDS + 120) * 1000,
  );
});
