/**
 * Context policies over a long session, without a model: a synthetic 500-turn session (each turn a
 * message, a bash call with ~1 KB of output and an answer) built turn by turn under each policy,
 * every request priced by the fake's prompt-cache model (server/harness/testing/prompt-cache.ts),
 * and the context build time on a 10k-event log.
 */
import { type ContextPolicy, normalizeContextPolicy } from '~/lib/context-policy';
import { BRAIN_TOOLS } from '~/lib/tools';
import { type Row, Rows, ms, pct } from '~/bench/table';
import { percentile } from '~/bench/stats';
import { requestTokens } from '~/server/harness/core/compaction';
import { SYSTEM_PROMPT, buildContext, buildRequest, type RequestSettings } from '~/server/harness/core/context';
import { LogView } from '~/server/harness/log-view';
import { SESSION_EVENTS_TOOL } from '~/server/harness/core/session-events';
import { Log } from '~/server/harness/testing/log-builder';
import { PromptCache } from '~/server/harness/testing/prompt-cache';

const TURNS = 500;
const OUTPUT = 'drwxr-xr-x 2 agent agent 4096 Dec  3 07:51 src  -rw-r--r-- 1 agent agent 1834 main.ts\n'.repeat(12);

function settingsFor(policy: ContextPolicy): RequestSettings {
  return { model: 'claude-bench', maxTokens: 8192, system: SYSTEM_PROMPT, tools: [...BRAIN_TOOLS, ...(policy.type === 'full' ? [] : [SESSION_EVENTS_TOOL])], history: policy };
}

/** A turn's first model request and its call's output (after the user's message). */
function callAndOutput(log: Log, i: number, windowFrom: number | null = null): void {
  const start = log.spanStart(windowFrom);
  log.say(`Checking the project for step ${i}.`);
  const call = log.toolUse(`toolu_${i}`, 'bash', { command: `ls -la src && git diff --stat HEAD~${i % 7}` });
  log.spanEnd(start);
  log.result(call, `${OUTPUT}exit ${i % 3}`);
}

/** A turn's second model request: the answer. */
function answer(log: Log, i: number, windowFrom: number | null = null): void {
  log.turn(() => log.say(`Step ${i} done: ${'nothing unexpected; the build still passes. '.repeat(3)}`), windowFrom);
}

const ask = (log: Log, i: number) => log.user(`Step ${i}: look at the project and report what changed.`);

/** One whole turn: the user's message, a model turn with a bash call, its output, the answer. */
function addTurn(log: Log, i: number): void {
  ask(log, i);
  callAndOutput(log, i);
  answer(log, i);
}

interface PolicyRun {
  uncached: number;
  write: number;
  read: number;
  maxInput: number;
  buildMs: number[];
  compactions: number;
}

function runPolicy(policy: ContextPolicy): PolicyRun {
  const log = new Log();
  const cache = new PromptCache();
  const settings = settingsFor(policy);
  const run: PolicyRun = { uncached: 0, write: 0, read: 0, maxInput: 0, buildMs: [], compactions: 0 };
  const bill = (body: Parameters<PromptCache['account']>[0]) => {
    const u = cache.account(body);
    run.uncached += u.input_tokens;
    run.write += u.cache_creation_input_tokens;
    run.read += u.cache_read_input_tokens;
    run.maxInput = Math.max(run.maxInput, u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens);
  };
  for (let i = 1; i <= TURNS; i++) {
    // Two model requests per turn: before the call, and after its result.
    for (const half of [0, 1]) {
      if (half === 0) ask(log, i);
      const t0 = performance.now();
      // As the harness builds it: each request's span start records where its window began.
      const { request, windowFrom } = buildRequest(log.events, settings);
      run.buildMs.push(performance.now() - t0);
      if (policy.type === 'compaction' && requestTokens(request) > policy.trigger_input_tokens) {
        // The summary request (same prefix) is billed too; its answer stands for everything so far.
        bill(request);
        log.add({ type: 'agent.thread_context_compacted', summary: `Summary through step ${i}: ${'what was done, what changed, what is next. '.repeat(60)}`, from_seq: 1, to_seq: log.events.at(-1)!.seq });
        run.compactions += 1;
        bill(buildContext(log.events, settings));
      } else {
        bill(request);
      }
      if (half === 0) callAndOutput(log, i, windowFrom);
      else answer(log, i, windowFrom);
    }
  }
  return run;
}

const k = (n: number) => `${(n / 1000).toFixed(0)}k`;

export function runContextBench(): Row[] {
  const rows = new Rows();
  const policies: ContextPolicy[] = [
    normalizeContextPolicy({ type: 'full' }),
    normalizeContextPolicy({ type: 'window', max_input_tokens: 100_000 }),
    normalizeContextPolicy({ type: 'clear_old_tool_results' }),
    normalizeContextPolicy({ type: 'compaction', trigger_input_tokens: 100_000 }),
  ];
  for (const p of policies) {
    const r = runPolicy(p);
    const total = r.uncached + r.write + r.read;
    const name = p.type === 'window' ? `window ${k(p.max_input_tokens)}` : p.type === 'compaction' ? `compaction at ${k(p.trigger_input_tokens)}` : p.type;
    rows.add(`${TURNS} turns, ${name}: input billed (uncached / cache write / cache read)`, `${k(r.uncached)} / ${k(r.write)} / ${k(r.read)}`);
    const fits = p.type === 'full' ? null : r.maxInput <= 200_000;
    rows.add(`${TURNS} turns, ${name}: largest request${r.compactions ? ` (${r.compactions} compactions)` : ''}`, `${k(r.maxInput)} tokens`, '≤ 200k (the model)', fits);
    rows.add(`${TURNS} turns, ${name}: share read from the cache`, pct(total > 0 ? r.read / total : 0), p.type === 'clear_old_tool_results' || p.type === 'compaction' ? '—' : '≥ 90 %', p.type === 'full' || p.type === 'window' ? r.read / total >= 0.9 : null);
  }
  // Build time on a 10k-event log: the whole log under full; under window, what the harness holds
  // (the task and the window, from where the last request's window began).
  const log = new Log();
  for (let i = 1; log.events.length < 10_000; i++) addTurn(log, i);
  const windowed = new Log();
  for (let i = 1; windowed.events.length < 10_000; i++) {
    ask(windowed, i);
    callAndOutput(windowed, i, buildRequest(windowed.events, settingsFor(policies[1]!)).windowFrom);
    answer(windowed, i, buildRequest(windowed.events, settingsFor(policies[1]!)).windowFrom);
  }
  for (const [p, events] of [[policies[0]!, log.events], [policies[1]!, LogView.of(windowed.events, policies[1]!).events]] as const) {
    const settings = settingsFor(p);
    for (let i = 0; i < 5; i++) buildContext(events, settings); // warm up
    const times: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t0 = performance.now();
      buildContext(events, settings);
      times.push(performance.now() - t0);
    }
    rows.add(`context build at ${log.events.length.toLocaleString('en-US')} events, ${p.type} (p50 / p95)`, `${ms(percentile(times, 50))} / ${ms(percentile(times, 95))}`, '≤ 5 ms', percentile(times, 50) <= 5);
  }
  return rows.rows;
}
