import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { HandRegistry } from '~/server/hands/registry';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { decide } from '~/server/harness/core/decide';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import { type FakeMessagesApi, echoFallback, startFakeMessagesApi } from '~/server/harness/testing/fake-messages-api';
import { mulberry32 } from '~/lib/prng';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

/**
 * A message sent at any moment is answered: decide() counts every event before a request's span
 * start as seen by that request, so no event may land between the read a request was built from
 * and its span start without the request noticing.
 */
let dir: string;
let raw: SessionStore;
let fake: FakeMessagesApi;
const harnesses: Harness[] = [];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-race-'));
  raw = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  fake = await startFakeMessagesApi({ fallback: echoFallback });
});

afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
  await fake.close();
  await raw.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const message = (text: string): NewEvent => ({ type: 'user.message', content: [{ type: 'text', text }] });

/** The store the harness sees: `before(method, args)` runs ahead of each call it makes, as a user's send racing the harness would. */
function racingStore(before: (method: string, args: unknown[]) => Promise<void>): SessionStore {
  return new Proxy(raw, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return async (...args: unknown[]) => {
        await before(prop, args);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

function makeHarness(store: SessionStore): Harness {
  const live = new LiveBus();
  const h = new Harness({
    store,
    live,
    hands: new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' }),
    model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }),
    retryBaseMs: 5,
    leaseTtlMs: 2_000,
  });
  harnesses.push(h);
  return h;
}

const userTexts = (events: StoredEvent[]) => events.flatMap((e) => (e.type === 'user.message' ? e.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])) : []));
const answers = (events: StoredEvent[]) => events.flatMap((e) => (e.type === 'agent.message' ? e.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])) : []));
const askedTexts = () => fake.requests.filter((r) => r.path === '/v1/messages').map((r) => JSON.stringify(r.body?.messages ?? []));

/** Every user.message lies before the span start of a request that ended without error: the request that contained it. */
function assertEveryMessageAnswered(events: StoredEvent[]): void {
  const ended = new Set(events.flatMap((e) => (e.type === 'span.model_request_end' && !e.is_error ? [e.model_request_start_id] : [])));
  const starts = events.filter((e) => e.type === 'span.model_request_start' && ended.has(e.id)).map((e) => e.seq);
  for (const m of events.filter((e) => e.type === 'user.message')) {
    expect(starts.some((s) => s > m.seq), `user.message at seq ${m.seq} is in no request that ended`).toBe(true);
  }
  expect(decide(events).kind, 'the session still has work').toBe('none');
  expect(events.at(-1)?.type).toBe('session.status_idle');
}

/**
 * Waits for every wake, including those a racing send started, to be over: a send during a run
 * marks it dirty, and the harness wakes the session again once that run ends.
 */
async function settle(harness: Harness, id: string, wakes: Promise<void>[]): Promise<void> {
  for (;;) {
    while (wakes.length > 0) await wakes.shift();
    if (harness.runningSessions === 0) return;
    wakes.push(harness.wake(id));
  }
}

describe('a message sent while the next request is being prepared', () => {
  it('is in the request, when it lands between the request build and its span start', async () => {
    const s = await raw.createSession({});
    await raw.emitEvent(s.id, message('m1'));
    const wakes: Promise<void>[] = [];
    let sent = false;
    const harness: Harness = makeHarness(
      racingStore(async (method, args) => {
        const batch = method === 'emitEvents' ? (args[1] as NewEvent[]) : [];
        // The user sends just as the request is about to be recorded, and the edge wakes the harness.
        if (!sent && batch.some((e) => e.type === 'span.model_request_start')) {
          sent = true;
          await raw.emitEvent(s.id, message('m2'));
          wakes.push(harness.wake(s.id));
        }
      }),
    );
    wakes.push(harness.wake(s.id));
    await settle(harness, s.id, wakes);
    const events = await raw.getEvents(s.id);
    expect(sent).toBe(true);
    assertEveryMessageAnswered(events);
    expect(answers(events).at(-1)).toContain('m2');
    expect(askedTexts().some((t) => t.includes('m2'))).toBe(true);
  });

  it('is answered whatever moment it arrives at (random interleavings of sends with the harness steps)', async () => {
    for (let seed = 1; seed <= 24; seed++) {
      const random = mulberry32(seed);
      const s = await raw.createSession({});
      await raw.emitEvent(s.id, message(`s${seed} m0`));
      const wakes: Promise<void>[] = [];
      let next = 1;
      const harness: Harness = makeHarness(
        racingStore(async (_method, args) => {
          if (args[0] !== s.id || next > 4 || random() > 0.3) return;
          await raw.emitEvent(s.id, message(`s${seed} m${next++}`));
          wakes.push(harness.wake(s.id));
        }),
      );
      wakes.push(harness.wake(s.id));
      await settle(harness, s.id, wakes);
      const events = await raw.getEvents(s.id);
      assertEveryMessageAnswered(events);
      const asked = askedTexts();
      for (const text of userTexts(events)) expect(asked.some((t) => t.includes(text)), `seed ${seed}: ${text} was never asked`).toBe(true);
      expect(answers(events).at(-1), `seed ${seed}`).toContain(`m${next - 1}`);
      await harness.close();
    }
  });
});
