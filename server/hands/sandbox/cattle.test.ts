import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '~/lib/events';
import type { HandRegistry } from '~/server/hands/registry';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import type { Harness } from '~/server/harness/harness';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';
import { testRuntime } from '~/server/harness/testing/test-runtime';

/**
 * End to end on real parts: the real SDK against the scripted fake model, the harness, and real
 * sandboxed paddock-hand processes (bubblewrap), one of which the test kills mid-command.
 */
let dir: string;
let store: SessionStore;
let fake: FakeMessagesApi;
let hands: HandRegistry;
let harness: Harness;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-cattle-'));
  store = await openSqliteStore({ file: path.join(dir, 'data', 'paddock.sqlite') });
  fake = await startFakeMessagesApi();
  const provisioner = createLocalHandProvisioner({ dataDir: path.join(dir, 'data'), workspacesDir: path.join(dir, 'hands') });
  ({ hands, harness } = testRuntime({
    store,
    model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }),
    dataDir: path.join(dir, 'data'),
    hands: { provisioners: { sandbox: provisioner }, defaultKind: 'sandbox' },
    harness: { retryBaseMs: 5 },
  }));
});

afterEach(async () => {
  await harness.close();
  await hands.closeAll();
  await fake.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Host pids of paddock-hand processes serving a workspace. */
function handPids(workspace: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return /paddock-(hand|exec)[-.]/.test(cmd) && cmd.includes(workspace) && !cmd.includes('sandbox-launcher');
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function waitFor(id: string, pred: (e: StoredEvent) => boolean, ms = 15_000): Promise<StoredEvent> {
  const ac = new AbortController();
  const t = setTimeout(() => ac.abort(), ms);
  try {
    for await (const e of store.follow(id, 0, ac.signal)) if (pred(e)) return e;
    throw new Error('timed out waiting for an event');
  } finally {
    clearTimeout(t);
    ac.abort();
  }
}

const resultText = (e: StoredEvent | undefined) => (e?.type === 'agent.tool_result' ? (e.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('') : '');

describe('sandboxed hands are cattle', () => {
  it('provisions on first use, edits files, survives the hand being killed mid-command and finishes on a fresh hand', async () => {
    fake.enqueue(
      toolUseResponse('bash', { command: 'pwd && echo hello > a.txt && cat a.txt' }),
      toolUseResponse('edit', { file_path: 'a.txt', old_string: 'hello', new_string: 'world' }),
      toolUseResponse('bash', { command: 'cat a.txt && sleep 30' }),
      toolUseResponse('provision', { kind: 'sandbox' }),
      toolUseResponse('bash', { command: 'echo recovered > b.txt && cat b.txt' }),
      textResponse('All done on a fresh hand.'),
    );
    const s = await store.createSession({});
    await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'do the task' }] });
    const done = harness.wake(s.id);

    const first = await waitFor(s.id, (e) => e.type === 'agent.tool_result');
    const workspace = resultText(first).split('\n')[0]!.trim();
    expect(resultText(first)).toContain('hello');
    expect(first).toMatchObject({ hand: 'sandbox-1' });

    // The third call is running `sleep 30`: kill the hand's process under it.
    const uses: StoredEvent[] = [];
    await waitFor(s.id, (e) => {
      if (e.type === 'agent.tool_use') uses.push(e);
      return uses.length === 3;
    });
    await new Promise((r) => setTimeout(r, 300));
    const pids = handPids(workspace);
    expect(pids.length).toBeGreaterThan(0);
    const killedAt = Date.now();
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone with an earlier one: the wrappers around the hand die with it
      }
    }

    const failed = await waitFor(s.id, (e) => e.type === 'agent.tool_result' && e.tool_use_id === uses[2]!.id);
    const detectMs = Date.parse(failed.processed_at) - killedAt;
    expect(detectMs).toBeLessThan(2_000);
    expect(failed).toMatchObject({ is_error: true, hand: 'sandbox-1' });
    expect(resultText(failed)).toMatch(/hand sandbox-1 was lost/);

    await done;
    const events = await store.getEvents(s.id);
    expect(events.filter((e) => e.type.startsWith('hand.')).map((e) => [e.type, 'hand' in e ? e.hand : ''])).toEqual([
      ['hand.provisioned', 'sandbox-1'],
      ['hand.lost', 'sandbox-1'],
      ['hand.provisioned', 'sandbox-2'],
    ]);
    const results = events.filter((e) => e.type === 'agent.tool_result');
    expect(resultText(results[1])).toContain('edited');
    expect(resultText(results[3])).toContain('provisioned sandbox-2');
    expect(results[4]).toMatchObject({ hand: 'sandbox-2' });
    expect(resultText(results[4])).toContain('recovered');
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
  }, 60_000);

  it('keeps the server’s data dir and environment out of a sandboxed hand', async () => {
    fs.writeFileSync(path.join(dir, 'data', 'master.key'), 'TOP-SECRET-KEY');
    process.env.PADDOCK_TEST_SECRET = 'env-secret-marker';
    try {
      fake.enqueue(
        toolUseResponse('bash', { command: `env; cat ${path.join(dir, 'data', 'master.key')}; ls ${path.join(dir, 'data')}; echo > /etc/escape-${process.pid} && echo WROTE-OUTSIDE; echo > /tmp/escape-${process.pid}` }),
        textResponse('checked'),
      );
      const s = await store.createSession({});
      await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'probe' }] });
      await harness.wake(s.id);
      const out = resultText((await store.getEvents(s.id, { types: ['agent.tool_result'] }))[0]);
      expect(out).toContain('exit code:');
      expect(out).not.toContain('TOP-SECRET-KEY');
      expect(out).not.toContain('env-secret-marker');
      expect(out).not.toContain('paddock.sqlite');
      expect(out).not.toContain('WROTE-OUTSIDE');
      // /tmp inside the hand is its own empty tmpfs: the write lands there, never on the host.
      expect(fs.existsSync(`/tmp/escape-${process.pid}`)).toBe(false);
    } finally {
      delete process.env.PADDOCK_TEST_SECRET;
    }
  }, 60_000);

  it('provisions a hand with the resource limits the brain asks for, and refuses bad ones', async () => {
    fake.enqueue(
      toolUseResponse('provision', { kind: 'sandbox', resources: { memory_mb: 256, cpu_seconds: 30 } }),
      toolUseResponse('bash', { command: 'ulimit -v; ulimit -t' }),
      toolUseResponse('provision', { kind: 'sandbox', resources: { memory_mb: 'lots' } }),
      textResponse('limited'),
    );
    const s = await store.createSession({});
    await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'limit yourself' }] });
    await harness.wake(s.id);
    const events = await store.getEvents(s.id);
    expect(events.find((e) => e.type === 'hand.provisioned')).toMatchObject({ hand: 'sandbox-1', resources: { memory_mb: 256, cpu_seconds: 30 } });
    const results = events.filter((e) => e.type === 'agent.tool_result');
    expect(resultText(results[1])).toContain(`${256 * 1024}\n30`);
    expect(results[2]).toMatchObject({ is_error: true });
    expect(resultText(results[2])).toContain('resources');
  }, 60_000);
});
