import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContextPolicy } from '~/lib/context-policy';
import { HandRegistry } from '~/server/hands/registry';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import type { ModelRequest } from '~/server/harness/core/context';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import type { ModelClient, ModelTurn } from '~/server/harness/core/model-client';
import { policyAgent } from '~/server/harness/testing/policy-agent';
import { type SqliteSessionStore, openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

/**
 * A wake reads the newest checkpoint, what follows it and what its request shows, not the whole
 * log, and asks the model exactly what a wake that read the whole log asks (two copies of one
 * database, one with its checkpoints deleted).
 */

/** Answers every request with a longish text, and keeps what it was asked. */
class RecordingModel implements ModelClient {
  readonly label = 'recording';
  readonly model = 'recording-model';
  readonly isDemo = false;
  readonly requests: ModelRequest[] = [];
  stream(request: ModelRequest): Promise<ModelTurn> {
    this.requests.push(structuredClone(request));
    const text = `Answer ${this.requests.length}: ${'the reader flushes on EOF now. '.repeat(20)}`;
    return Promise.resolve({ content: [{ type: 'text', text }], stopReason: 'end_turn', usage: { input_tokens: 0, output_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, ttftMs: 1 });
  }
}

/** The store, counting the events its reads hand out. */
function counting(store: SessionStore): { store: SessionStore; read: { events: number } } {
  const read = { events: 0 };
  const proxy = new Proxy(store, {
    get(target, prop) {
      if (prop === 'getEvents') {
        return async (...args: Parameters<SessionStore['getEvents']>) => {
          const out = await target.getEvents(...args);
          read.events += out.length;
          return out;
        };
      }
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { store: proxy, read };
}

function harnessOn(store: SessionStore, model: ModelClient): Harness {
  const live = new LiveBus();
  const hands = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
  return new Harness({ store, live, hands, model, maxRetries: 0, leaseTtlMs: 5_000 });
}

const say = (text: string) => ({ type: 'user.message' as const, content: [{ type: 'text' as const, text }] });

let dir: string;
const open: Array<{ close(): Promise<void> }> = [];
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-wake-'));
});
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function openStore(file: string): Promise<SqliteSessionStore> {
  const s = await openSqliteStore({ file: path.join(dir, file) });
  open.push(s);
  return s;
}

/** A session of `asks` messages and answers, each run by the harness (so checkpoints and windows are recorded as in use). */
async function longSession(policy: ContextPolicy, asks: number): Promise<{ id: string; events: number }> {
  const store = await openSqliteStore({ file: path.join(dir, 'a.sqlite') });
  const harness = harnessOn(store, new RecordingModel());
  const s = await store.createSession({ agent: policyAgent(policy) });
  for (let i = 1; i <= asks; i++) {
    await store.emitEvent(s.id, say(`Step ${i}: ${'please look at the reader again and tell me what changed. '.repeat(12)}`));
    await harness.wake(s.id);
  }
  await harness.close();
  const events = (await store.getSession(s.id))!.last_seq;
  await store.close();
  fs.copyFileSync(path.join(dir, 'a.sqlite'), path.join(dir, 'b.sqlite'));
  return { id: s.id, events };
}

describe('wake from a checkpoint', () => {
  for (const policy of [{ type: 'window', max_input_tokens: 4_000 }, { type: 'compaction', trigger_input_tokens: 4_000 }] as ContextPolicy[]) {
    it(`reads the checkpoint and what the request shows, and asks what a whole-log wake asks (${policy.type})`, async () => {
      const { id, events } = await longSession(policy, 120);
      const a = await openStore('a.sqlite');
      const b = await openStore('b.sqlite');
      expect((await a.readCheckpoint(id))?.seq).toBe(events);
      await b.db.deleteFrom('session_checkpoints').execute();
      const runs = [];
      for (const store of [a, b]) {
        const { store: watched, read } = counting(store);
        const model = new RecordingModel();
        const harness = harnessOn(watched, model);
        open.push(harness);
        await store.emitEvent(id, say('And now the last step, please.'));
        await harness.wake(id);
        runs.push({ read: read.events, request: model.requests[0] });
      }
      const [fromCheckpoint, whole] = runs;
      expect(fromCheckpoint!.request).toBeDefined();
      expect(fromCheckpoint!.request).toEqual(whole!.request);
      expect(whole!.read).toBeGreaterThanOrEqual(events);
      // The session has 120 turns; the request shows the task and a few of them.
      expect(fromCheckpoint!.read).toBeLessThan(events / 4);
    });
  }
});
