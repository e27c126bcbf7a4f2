import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { normalizeEnvironmentConfig } from '~/lib/agent';
import type { LiveDelta } from '~/lib/events';
import type { Hand } from '~/lib/hand';
import { createMemoryProvisioner, MemoryHand } from '~/server/hands/memory-hand';
import type { Provisioner } from '~/server/hands/provisioner';
import { type HandScope, HandRegistry } from '~/server/hands/registry';
import { WarmPool } from '~/server/hands/warm-pool';
import { LiveBus } from '~/server/session/live-bus';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

let dir: string;
let store: SessionStore;
let live: LiveBus;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-hands-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  live = new LiveBus();
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A hand whose death the test controls. */
class MortalHand extends MemoryHand {
  private die!: (reason: string) => void;
  override readonly lost = new Promise<string>((resolve) => (this.die = resolve));
  kill(reason: string) {
    this.die(reason);
  }
}

function countingProvisioner(make: (id: string) => Hand = (id) => new MortalHand(id)) {
  const made: Hand[] = [];
  const p: Provisioner = {
    provision: async (id) => {
      await new Promise((r) => setTimeout(r, 20)); // like a process start
      const h = make(id);
      made.push(h);
      return h;
    },
  };
  return { p, made };
}

async function scopeFor(): Promise<HandScope> {
  const s = await store.createSession({});
  return { sessionId: s.id, signal: new AbortController().signal, emit: (e, key) => store.emitEvent(s.id, e, { idempotencyKey: key }) };
}

const handEvents = async (id: string) => (await store.getEvents(id)).filter((e) => e.type.startsWith('hand.'));

describe('hand registry', () => {
  it('provisions nothing until a call needs a hand, then the default kind once for parallel calls', async () => {
    const { p, made } = countingProvisioner();
    const reg = new HandRegistry({ store, live, provisioners: { sandbox: p }, defaultKind: 'sandbox' });
    const scope = await scopeFor();
    expect(await reg.list(scope)).toEqual([]);
    const progress: LiveDelta[] = [];
    live.subscribe(scope.sessionId, (d) => progress.push(d));
    const [a, b, c] = await Promise.all([reg.resolve(scope, undefined), reg.resolve(scope, undefined), reg.resolve(scope, undefined)]);
    expect(made).toHaveLength(1);
    expect(a.id).toBe('sandbox-1');
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(await handEvents(scope.sessionId)).toMatchObject([{ type: 'hand.provisioned', hand: 'sandbox-1', kind: 'sandbox' }]);
    expect(progress.map((d) => d.kind === 'hand' && d.phase)).toEqual(['starting', 'ready']);
  });

  it("gives a sandbox hand its environment's hosts (limited networking) besides the server's and the session's own", async () => {
    const specs: unknown[] = [];
    const p: Provisioner = { provision: (id, spec) => (specs.push(spec), Promise.resolve(new MemoryHand(id))) };
    const web = normalizeEnvironmentConfig({ type: 'cloud', networking: { type: 'limited', allowed_hosts: ['api.example.com', '*.cdn.example'] } });
    const reg = new HandRegistry({ store, live, provisioners: { sandbox: p }, defaultKind: 'sandbox', allowedDomains: ['server.example'], environment: (id) => Promise.resolve(id === 'env_web' ? web : normalizeEnvironmentConfig(null)) });
    const s = await store.createSession({ environment_id: 'env_web', metadata: { allowed_domains: 'own.example' } });
    await reg.resolve({ sessionId: s.id, signal: new AbortController().signal, emit: (e, key) => store.emitEvent(s.id, e, { idempotencyKey: key }) }, undefined);
    expect(specs).toEqual([{ kind: 'sandbox', allowedDomains: ['server.example', 'own.example', 'api.example.com', '*.cdn.example'] }]);
    const other = await store.createSession({ environment_id: 'env_default' });
    await reg.resolve({ sessionId: other.id, signal: new AbortController().signal, emit: (e, key) => store.emitEvent(other.id, e, { idempotencyKey: key }) }, undefined);
    expect(specs[1]).toEqual({ kind: 'sandbox', allowedDomains: ['server.example'] });
  });

  it('gives a sandbox hand unrestricted networking only when its environment asks and the server allows it', async () => {
    const specs: unknown[] = [];
    const p: Provisioner = { provision: (id, spec) => (specs.push(spec), Promise.resolve(new MemoryHand(id))) };
    const open = normalizeEnvironmentConfig({ type: 'cloud', networking: { type: 'unrestricted' } });
    const start = async (allowUnrestrictedNetwork: boolean) => {
      const reg = new HandRegistry({ store, live, provisioners: { sandbox: p }, defaultKind: 'sandbox', allowedDomains: ['server.example'], environment: () => Promise.resolve(open), allowUnrestrictedNetwork });
      const s = await store.createSession({ environment_id: 'env_open' });
      await reg.resolve({ sessionId: s.id, signal: new AbortController().signal, emit: (e, key) => store.emitEvent(s.id, e, { idempotencyKey: key }) }, undefined);
      expect(await reg.networkPolicy(s.id)).toEqual({ type: allowUnrestrictedNetwork ? 'unrestricted' : 'limited', hosts: ['server.example'] });
    };
    await start(true);
    await start(false);
    expect(specs).toEqual([
      { kind: 'sandbox', allowedDomains: ['server.example'], network: 'unrestricted' },
      { kind: 'sandbox', allowedDomains: ['server.example'] },
    ]);
  });

  it('routes a named hand, refuses an unknown one, and a second provision becomes current', async () => {
    const { p } = countingProvisioner();
    const reg = new HandRegistry({ store, live, provisioners: { sandbox: p, memory: createMemoryProvisioner() }, defaultKind: 'sandbox' });
    const scope = await scopeFor();
    const first = await reg.resolve(scope, undefined);
    const second = await reg.provision(scope, { kind: 'memory' });
    expect(second.id).toBe('memory-2');
    expect((await reg.resolve(scope, undefined)).id).toBe('memory-2');
    expect((await reg.resolve(scope, 'sandbox-1')).hand).toBe(first.hand);
    await expect(reg.resolve(scope, 'sandbox-9')).rejects.toThrow(/no hand named sandbox-9/);
  });

  it('records a hand that dies as lost, refuses calls to it, and gives the next call a fresh one', async () => {
    const { p, made } = countingProvisioner();
    const reg = new HandRegistry({ store, live, provisioners: { sandbox: p }, defaultKind: 'sandbox' });
    const scope = await scopeFor();
    await reg.resolve(scope, undefined);
    (made[0] as MortalHand).kill('process exited with signal SIGKILL');
    await new Promise((r) => setTimeout(r, 30));
    expect(await handEvents(scope.sessionId)).toMatchObject([
      { type: 'hand.provisioned', hand: 'sandbox-1' },
      { type: 'hand.lost', hand: 'sandbox-1', reason: 'process exited with signal SIGKILL' },
    ]);
    await expect(reg.resolve(scope, 'sandbox-1')).rejects.toThrow(/hand sandbox-1 was lost: .*its workspace and files are gone/);
    const fresh = await reg.resolve(scope, undefined);
    expect(fresh.id).toBe('sandbox-2');
    expect(made).toHaveLength(2);
  });

  it('releases a hand and closes it', async () => {
    const reg = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
    const scope = await scopeFor();
    await reg.resolve(scope, undefined);
    await reg.release(scope, 'memory-1');
    await expect(reg.release(scope, 'memory-1')).rejects.toThrow(/already released/);
    expect((await handEvents(scope.sessionId)).map((e) => e.type)).toEqual(['hand.provisioned', 'hand.released']);
  });

  it('transfers a hand with its workspace to another session, recorded in both logs', async () => {
    const reg = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
    const a = await scopeFor();
    const b = await scopeFor();
    const src = await reg.resolve(a, undefined);
    await src.hand!.execute('write', { file_path: 'wip.txt', content: 'half done' }, { callId: 'c1', signal: a.signal });
    const moved = await reg.transfer(a, src.id, b);
    expect(await moved.hand!.execute('read', { file_path: 'wip.txt' }, { callId: 'c2', signal: b.signal })).toBe('half done');
    expect(await handEvents(a.sessionId)).toMatchObject([{ type: 'hand.provisioned' }, { type: 'hand.released', hand: 'memory-1', transferred_to: { session_id: b.sessionId, hand: 'memory-1' } }]);
    expect(await handEvents(b.sessionId)).toMatchObject([{ type: 'hand.provisioned', hand: 'memory-1', transferred_from: { session_id: a.sessionId, hand: 'memory-1' } }]);
    await expect(reg.resolve(a, 'memory-1')).rejects.toThrow(/released/);
  });

  it('refuses to move a browser hand (its tabs serve their own session), writing nothing to either log', async () => {
    const reg = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
    const a = await scopeFor();
    const b = await scopeFor();
    const tab = await reg.attachBrowser(a, 'tab-12345678', 'offline');
    const before = [await handEvents(a.sessionId), await handEvents(b.sessionId)];
    await expect(reg.transfer(a, tab.id, b)).rejects.toThrow(`hand ${tab.id} lives in the browser tabs of session ${a.sessionId} and cannot move`);
    expect([await handEvents(a.sessionId), await handEvents(b.sessionId)]).toEqual(before);
    expect(await reg.isReady(a, tab.id)).toBe(true);
  });

  it('after a restart, hands the log says were ready are recorded lost and numbering continues', async () => {
    const scope = await scopeFor();
    const before = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
    await before.resolve(scope, undefined);
    const after = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
    const fresh = await after.resolve(scope, undefined);
    expect(fresh.id).toBe('memory-2');
    expect(await handEvents(scope.sessionId)).toMatchObject([
      { type: 'hand.provisioned', hand: 'memory-1' },
      { type: 'hand.lost', hand: 'memory-1', reason: expect.stringContaining('server process is gone') as unknown },
      { type: 'hand.provisioned', hand: 'memory-2' },
    ]);
  });

  it('re-attaches a remote hand on a harness’s new lease epoch, and reports it lost when its endpoint is gone', async () => {
    const { p, made } = countingProvisioner();
    const endpoints = { box: { url: 'http://hand.invalid/mcp', token: 'secret-token' } };
    const scope = await scopeFor();
    const first = new HandRegistry({ store, live, provisioners: { remote: p }, defaultKind: 'memory', remoteEndpoints: endpoints });
    await first.provision({ ...scope, epoch: 1 }, { kind: 'remote', endpoint: 'box' });
    // A new epoch on the same process keeps the hand it holds: nothing is re-attached.
    expect(await first.isReady({ ...scope, epoch: 2 }, 'remote-1')).toBe(true);
    expect(made).toHaveLength(1);
    // Another process takes the session over: it connects again instead of losing the hand.
    const next = new HandRegistry({ store, live, provisioners: { remote: p }, defaultKind: 'memory', remoteEndpoints: endpoints });
    expect(await next.isReady({ ...scope, epoch: 3 }, 'remote-1')).toBe(true);
    expect(made).toHaveLength(2);
    // A process whose configuration no longer names the endpoint cannot: the hand is lost.
    const unconfigured = new HandRegistry({ store, live, provisioners: { remote: p }, defaultKind: 'memory' });
    expect(await unconfigured.isReady({ ...scope, epoch: 4 }, 'remote-1')).toBe(false);
    expect(await handEvents(scope.sessionId)).toMatchObject([
      { type: 'hand.provisioned', hand: 'remote-1', kind: 'remote', endpoint: 'box' },
      { type: 'hand.reattached', hand: 'remote-1' },
      { type: 'hand.lost', hand: 'remote-1', reason: expect.stringContaining('endpoint box is not configured') as unknown },
    ]);
    // The previous holder learns of the loss on its next epoch and lets go of its connection.
    expect(await next.isReady({ ...scope, epoch: 5 }, 'remote-1')).toBe(false);
    expect(JSON.stringify(await store.getEvents(scope.sessionId))).not.toContain('secret-token');
  });

  it('finds a hand another instance added since this one last read the log, and numbers after it', async () => {
    const { p } = countingProvisioner();
    const endpoints = { box: { url: 'http://hand.invalid/mcp' } };
    const scope = await scopeFor();
    const x = new HandRegistry({ store, live, provisioners: { remote: p }, defaultKind: 'memory', remoteEndpoints: endpoints });
    const y = new HandRegistry({ store, live, provisioners: { remote: p }, defaultKind: 'memory', remoteEndpoints: endpoints });
    expect(await x.list(scope)).toEqual([]); // X has read the (empty) registry
    await y.provision({ ...scope, epoch: 1 }, { kind: 'remote', endpoint: 'box' });
    // A user's request on X names the hand Y provisioned: X looks again and connects to it.
    expect((await x.resolve(scope, 'remote-1')).hand).not.toBeNull();
    const attached = await x.attachBrowser(scope, 'tab-12345678', 'offline');
    expect(attached.id).toBe('browser-2');
    await expect(x.resolve(scope, 'sandbox-9')).rejects.toThrow(/no hand named sandbox-9/);
  });

  it('fails a provision with the provisioner’s reason and reports it as progress', async () => {
    const reg = new HandRegistry({
      store,
      live,
      provisioners: { sandbox: { provision: () => Promise.reject(new Error('sandbox unavailable: bubblewrap (bwrap) not found')) } },
      defaultKind: 'sandbox',
    });
    const scope = await scopeFor();
    const progress: LiveDelta[] = [];
    live.subscribe(scope.sessionId, (d) => progress.push(d));
    await expect(reg.resolve(scope, undefined)).rejects.toThrow(/bubblewrap \(bwrap\) not found/);
    expect(progress.at(-1)).toMatchObject({ kind: 'hand', phase: 'failed', detail: expect.stringContaining('bwrap') as unknown });
    await expect(reg.provision(scope, { kind: 'remote', endpoint: 'nope' })).rejects.toThrow(/configured endpoints/);
  });

  it('hands out warm-pool hands once each and refills in the background', async () => {
    const { p, made } = countingProvisioner();
    const pool = new WarmPool(p, { kind: 'sandbox', allowedDomains: [] }, 2).start();
    await new Promise((r) => setTimeout(r, 80));
    expect(pool.available).toBe(2);
    const reg = new HandRegistry({ store, live, provisioners: { sandbox: p }, defaultKind: 'sandbox', pool });
    const a = await reg.resolve(await scopeFor(), undefined);
    const b = await reg.resolve(await scopeFor(), undefined);
    expect(a.hand).not.toBe(b.hand);
    expect(made.slice(0, 2)).toContain(a.hand);
    expect(made.slice(0, 2)).toContain(b.hand);
    await new Promise((r) => setTimeout(r, 80));
    expect(pool.available).toBe(2); // refilled with fresh hands
    expect(made).toHaveLength(4);
    await pool.close();
  });
});
