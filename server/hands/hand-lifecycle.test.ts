import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '~/lib/events';
import type { ReaperLimits } from '~/server/hands/idle-reaper';
import { type HandScope, HandRegistry } from '~/server/hands/registry';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { cmdline, descendants, eventually, running } from '~/server/hands/testing/processes';
import { WarmPool } from '~/server/hands/warm-pool';
import { Workspaces } from '~/server/hands/workspaces';
import type { ToolUse } from '~/server/harness/core/decide';
import { LiveBus } from '~/server/session/live-bus';
import { runToolCall } from '~/server/harness/steps/tool-call';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

/**
 * Hand lifecycle on real sandboxed paddock-hand processes: idle hands are suspended (process
 * gone, files kept) and resumed under the same name on the next call; a cap on live hands
 * suspends the least recently used; deleting a session removes its hands' workspaces.
 */
let dir: string;
let store: SessionStore;
let registry: HandRegistry | null = null;
let pool: WarmPool | null = null;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-lifecycle-'));
  store = await openSqliteStore({ file: path.join(dir, 'data', 'paddock.sqlite') });
});

afterEach(async () => {
  await registry?.closeAll();
  registry = null;
  await pool?.close();
  pool = null;
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const workspacesDir = () => path.join(dir, 'hands');

function makeRegistry(lifecycle?: ReaperLimits, poolSize = 0): HandRegistry {
  const provisioner = createLocalHandProvisioner({ dataDir: path.join(dir, 'data'), workspacesDir: workspacesDir() });
  pool = poolSize > 0 ? new WarmPool(provisioner, { kind: 'sandbox', allowedDomains: [] }, poolSize).start() : null;
  registry = new HandRegistry({
    store,
    live: new LiveBus(),
    provisioners: { sandbox: provisioner },
    defaultKind: 'sandbox',
    workspaces: new Workspaces(workspacesDir()),
    pool,
    ...(lifecycle ? { lifecycle } : {}),
  });
  return registry;
}

async function newScope(): Promise<HandScope> {
  const s = await store.createSession({});
  return { sessionId: s.id, signal: new AbortController().signal, emit: (e, key) => store.emitEvent(s.id, e, { idempotencyKey: key }) };
}

let calls = 0;
/** One bash call through the harness's tool-call path. */
async function bash(hands: HandRegistry, scope: HandScope, command: string, hand?: string): Promise<{ text: string; hand?: string }> {
  const call = { id: `sevt_call${++calls}`, name: 'bash', input: { command }, ...(hand ? { hand } : {}) } as unknown as ToolUse;
  return runToolCall(hands, scope, call, scope.signal);
}

/** The paddock-hand processes (launcher, bwrap, server) of this test process serving a workspace. */
function handProcesses(workspace: string): number[] {
  return descendants(process.pid).filter((p) => cmdline(p).includes(workspace));
}

const handEvents = async (id: string) => (await store.getEvents(id)).filter((e) => e.type.startsWith('hand.')).map((e) => [e.type, (e as StoredEvent & { hand: string }).hand]);

/** Waits until the session's log holds `n` hand events (a suspend is logged after its process ends). */
async function waitForEvents(sessionId: string, n: number): Promise<void> {
  const end = Date.now() + 10_000;
  while ((await handEvents(sessionId)).length < n) {
    if (Date.now() > end) throw new Error(`fewer than ${n} hand events`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('hand lifecycle', () => {
  it('suspends an idle hand (its processes end, its files stay) and resumes it under the same name on the next call', async () => {
    const hands = makeRegistry({ idleMs: 400, maxLive: 10 });
    const scope = await newScope();
    const first = await bash(hands, scope, 'echo kept > kept.txt && pwd');
    expect(first.hand).toBe('sandbox-1');
    const workspace = first.text.split('\n')[0]!.trim();
    const pids = handProcesses(workspace);
    expect(pids.length, 'the hand runs as processes under this one').toBeGreaterThan(0);

    expect(await eventually(() => pids.every((p) => !running(p)), 5_000), 'the idle hand’s processes ended').toBe(true);
    await waitForEvents(scope.sessionId, 2);
    expect(await handEvents(scope.sessionId)).toEqual([
      ['hand.provisioned', 'sandbox-1'],
      ['hand.suspended', 'sandbox-1'],
    ]);
    expect(fs.readFileSync(path.join(workspace, 'kept.txt'), 'utf8')).toBe('kept\n');

    const again = await bash(hands, scope, 'cat kept.txt && pwd');
    expect(again.hand).toBe('sandbox-1');
    expect(again.text).toContain('kept');
    expect(again.text).toContain(workspace);
    expect(handProcesses(workspace).length, 'resumed: running again').toBeGreaterThan(0);
    const events = await handEvents(scope.sessionId);
    expect(events.slice(0, 3)).toEqual([
      ['hand.provisioned', 'sandbox-1'],
      ['hand.suspended', 'sandbox-1'],
      ['hand.resumed', 'sandbox-1'],
    ]);
    expect(events.some(([type]) => type === 'hand.lost'), 'a suspended hand is not lost').toBe(false);
  }, 60_000);

  it('keeps live hands under the cap by suspending the least recently used one', async () => {
    const hands = makeRegistry({ idleMs: 600_000, maxLive: 2 });
    const [a, b, c] = [await newScope(), await newScope(), await newScope()];
    await bash(hands, a, 'true');
    await bash(hands, b, 'true');
    await bash(hands, a, 'true'); // a is now more recently used than b
    expect(hands.liveHands()).toHaveLength(2);
    await bash(hands, c, 'true');
    expect(hands.liveHands().map((h) => h.sessionId).sort()).toEqual([a.sessionId, c.sessionId].sort());
    expect(await handEvents(b.sessionId)).toEqual([
      ['hand.provisioned', 'sandbox-1'],
      ['hand.suspended', 'sandbox-1'],
    ]);
    expect((await store.getEvents(b.sessionId)).find((e) => e.type === 'hand.suspended')).toMatchObject({ reason: 'cap' });
  }, 60_000);

  it('forgets an idle session’s hands and reads them back from the log: the suspended hand resumes with its files', async () => {
    const hands = makeRegistry({ idleMs: 300, maxLive: 10 });
    const scope = await newScope();
    await bash(hands, scope, 'echo still-here > f.txt');
    await waitForEvents(scope.sessionId, 2);
    hands.forgetIdleSessions(Date.now() + 1_000, 300);
    expect(hands.knownSessions()).toEqual([]);
    const again = await bash(hands, scope, 'cat f.txt');
    expect(again).toMatchObject({ hand: 'sandbox-1', text: expect.stringContaining('still-here') as unknown });
  }, 60_000);

  it('on a server stop suspends idle hands with their files kept, and the restarted server resumes them under the same name', async () => {
    const hands = makeRegistry();
    const scope = await newScope();
    const first = await bash(hands, scope, 'pwd; echo kept > f.txt');
    const workspace = first.text.split('\n')[0]!.trim();
    expect(handProcesses(workspace).length).toBeGreaterThan(0);
    // A terminal's Ctrl-C reaches the hand's launcher too: the hand stays for the server to suspend.
    // (Its own launcher, or the launcher it shares with the hands of its network policy.)
    const serves = (p: number) => cmdline(p).includes(workspace) || descendants(p).some((c) => cmdline(c).includes(workspace));
    const launcher = descendants(process.pid).find((p) => cmdline(p).includes('sandbox-launcher') && serves(p));
    expect(launcher).toBeDefined();
    process.kill(launcher!, 'SIGINT');
    await new Promise((r) => setTimeout(r, 300));
    expect(await bash(hands, scope, 'cat f.txt')).toMatchObject({ hand: 'sandbox-1', text: expect.stringContaining('kept') as unknown });
    await hands.stopAll();
    expect(await handEvents(scope.sessionId)).toEqual([
      ['hand.provisioned', 'sandbox-1'],
      ['hand.suspended', 'sandbox-1'],
    ]);
    expect((await store.getEvents(scope.sessionId)).at(-1)).toMatchObject({ type: 'hand.suspended', reason: 'shutdown' });
    expect(await eventually(() => handProcesses(workspace).length === 0)).toBe(true);
    expect(fs.readFileSync(path.join(workspace, 'f.txt'), 'utf8')).toBe('kept\n');

    // The restarted server: a new registry over the same store and workspaces, a new lease epoch.
    const restarted = makeRegistry();
    const again = await bash(restarted, { ...scope, epoch: 2 }, 'cat f.txt');
    expect(again).toMatchObject({ hand: 'sandbox-1', text: expect.stringContaining('kept') as unknown });
    expect((await handEvents(scope.sessionId)).at(-1)).toEqual(['hand.resumed', 'sandbox-1']);
  }, 60_000);

  it('removes the workspaces of a deleted session’s hands, running or suspended, and only then', async () => {
    const hands = makeRegistry({ idleMs: 600_000, maxLive: 10 });
    const scope = await newScope();
    const one = (await bash(hands, scope, 'pwd')).text.split('\n')[0]!.trim();
    const provisioned = await runToolCall(hands, scope, { id: 'sevt_prov', name: 'provision', input: { kind: 'sandbox' } } as unknown as ToolUse, scope.signal);
    expect(provisioned.hand).toBe('sandbox-2');
    const two = (await bash(hands, scope, 'pwd', 'sandbox-2')).text.split('\n')[0]!.trim();
    await hands.suspend(scope.sessionId, 'sandbox-1', 'idle');
    expect(fs.existsSync(one) && fs.existsSync(two), 'both workspaces stay while the session exists').toBe(true);
    const pids = handProcesses(two);

    await hands.deleteSession(scope.sessionId);
    expect(fs.existsSync(one)).toBe(false);
    expect(fs.existsSync(two)).toBe(false);
    expect(fs.readdirSync(workspacesDir())).toEqual([]);
    expect(await eventually(() => pids.every((p) => !running(p)), 5_000)).toBe(true);
  }, 60_000);

  it('removes the workspace of a hand whose process dies, and the call on it fails naming it and saying its files are gone', async () => {
    const hands = makeRegistry();
    const scope = await newScope();
    const workspace = (await bash(hands, scope, 'pwd')).text.split('\n')[0]!.trim();
    const running = bash(hands, scope, 'sleep 30', 'sandbox-1');
    running.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    for (const pid of handProcesses(workspace)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // ended with its parent
      }
    }
    await expect(running).rejects.toThrow(/hand sandbox-1 was lost: .*its workspace and files are gone/s);
    await waitForEvents(scope.sessionId, 2);
    expect(await handEvents(scope.sessionId)).toEqual([
      ['hand.provisioned', 'sandbox-1'],
      ['hand.lost', 'sandbox-1'],
    ]);
    expect(await eventually(() => !fs.existsSync(workspace), 5_000), 'the lost hand’s files are removed').toBe(true);
  }, 60_000);

  it('a pooled hand’s errors name it as the log does (sandbox-N), not by its pool name', async () => {
    const hands = makeRegistry(undefined, 1);
    await eventually(() => pool!.available === 1, 20_000);
    const scope = await newScope();
    const entry = await hands.resolve(scope, undefined);
    expect(entry.id).toBe('sandbox-1');
    const ac = new AbortController();
    const running = entry.hand!.execute('bash', { command: 'sleep 5' }, { callId: 'c1', signal: ac.signal });
    setTimeout(() => ac.abort(), 200);
    const err = await running.then(
      () => '',
      (e: unknown) => (e as Error).message,
    );
    expect(err).toContain('sandbox-1');
    expect(err).not.toContain('pool-');
  }, 60_000);
});
