import 'server-only';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Paddock's Prometheus metrics (prom-client), one registry per process (kept on globalThis: Next
 * may load this module more than once). Served at `/metrics` and `/v1/metrics` to API keys.
 * Gauges of live things are read when scraped, from the parts that hold them (`setLiveSources`).
 */

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

function create() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'paddock_' });
  const sources: { hands: () => Record<string, number>; sessions: () => number } = { hands: () => ({}), sessions: () => 0 };
  return {
    registry,
    sources,
    ttft: new Histogram({ name: 'paddock_model_time_to_first_token_seconds', help: 'From a model request to its first streamed token', labelNames: ['model'], buckets: SECONDS, registers: [registry] }),
    modelDuration: new Histogram({
      name: 'paddock_model_request_duration_seconds',
      help: 'Model requests, start to end (outcome: ok, error, interrupted)',
      labelNames: ['model', 'outcome'],
      buckets: SECONDS,
      registers: [registry],
    }),
    tokens: new Counter({ name: 'paddock_model_tokens_total', help: 'Model tokens by kind: input (uncached), output, cache_read, cache_write', labelNames: ['kind'], registers: [registry] }),
    toolDuration: new Histogram({
      name: 'paddock_tool_duration_seconds',
      help: 'Tool calls, start to result, by tool and the kind of hand (none: run by the harness)',
      labelNames: ['tool', 'hand_kind', 'outcome'],
      buckets: SECONDS,
      registers: [registry],
    }),
    provisions: new Counter({ name: 'paddock_hand_provisions_total', help: 'Hands provisioned, by kind and source (pool: pre-started, cold: started for the call)', labelNames: ['kind', 'source'], registers: [registry] }),
    provisionDuration: new Histogram({ name: 'paddock_hand_provision_duration_seconds', help: 'Hand provisioning, by kind and source', labelNames: ['kind', 'source'], buckets: SECONDS, registers: [registry] }),
    takeovers: new Counter({ name: 'paddock_lease_takeovers_total', help: 'Session leases this process took over from another holder (an expired lease: a crashed or stopped harness)', registers: [registry] }),
    storeErrors: new Counter({ name: 'paddock_store_errors_total', help: 'Store operations that failed because the database was unreachable (each retried)', labelNames: ['operation'], registers: [registry] }),
    liveHands: new Gauge({
      name: 'paddock_hands_live',
      help: 'Hand processes and connections this process holds, by kind',
      labelNames: ['kind'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [kind, n] of Object.entries(sources.hands())) this.set({ kind }, n);
      },
    }),
    liveSessions: new Gauge({
      name: 'paddock_sessions_live',
      help: 'Sessions whose harness runs on this process now (a lease held)',
      registers: [registry],
      collect() {
        this.set(sources.sessions());
      },
    }),
  };
}

type Metrics = ReturnType<typeof create>;
const key = Symbol.for('paddock.metrics');
const g = globalThis as typeof globalThis & { [key]?: Metrics };

export function metrics(): Metrics {
  return (g[key] ??= create());
}

/** Where the live gauges read from: the hand registry's hands and the harness's running sessions. */
export function setLiveSources(s: { hands?: () => Record<string, number>; sessions?: () => number }): void {
  const m = metrics();
  if (s.hands) m.sources.hands = s.hands;
  if (s.sessions) m.sources.sessions = s.sessions;
}

/** The exposition text, and its content type. */
export async function scrape(): Promise<{ body: string; contentType: string }> {
  const m = metrics();
  return { body: await m.registry.metrics(), contentType: m.registry.contentType };
}
