import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hand } from '~/lib/hand';
import { parseHostRequest } from '~/server/hands/sandbox/host-wire';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { cmdline, descendants, running } from '~/server/hands/testing/processes';

/**
 * One launcher per network policy: the hands that share a policy share its launcher, proxy and
 * socat bridges, each hand still its own bubblewrap in its own folder; another policy gets a
 * launcher of its own. (Isolation and limits are the same tests as ever: isolation.test.ts,
 * limits.test.ts, hand-identity.test.ts, workspace-masks.test.ts go through these launchers.)
 */
let calls = 0;
const call = () => ({ callId: `c-${++calls}`, signal: new AbortController().signal });
const signal = new AbortController().signal;

const hosts = () => descendants(process.pid).filter((p) => /sandbox-launcher\S* --host/.test(cmdline(p)));
const bridges = (root: number) => descendants(root).filter((p) => /socat UNIX-LISTEN:/.test(cmdline(p)));

describe('shared launchers', () => {
  let dir: string;
  let provisioner: ReturnType<typeof createLocalHandProvisioner>;
  const open: Hand[] = [];

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-hand-host-'));
    provisioner = createLocalHandProvisioner({ dataDir: path.join(dir, 'data'), workspacesDir: path.join(dir, 'ws'), sharedLaunchers: true });
  });

  afterAll(async () => {
    await Promise.all(open.map((h) => h.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('hands with one network policy share one launcher and its proxy bridges, each in its own folder', { timeout: 120_000 }, async () => {
    const [a, b] = await Promise.all([
      provisioner.provision('host-a', { kind: 'sandbox' }, { signal }),
      provisioner.provision('host-b', { kind: 'sandbox' }, { signal }),
    ]);
    open.push(a, b);
    await a.execute('write', { path: 'mine.txt', content: 'a' }, call());
    const aDir = (await a.execute('bash', { command: 'pwd' }, call())).split('\n')[0]!.trim();
    expect(await b.execute('bash', { command: 'pwd' }, call())).not.toContain(aDir);
    expect(await b.execute('bash', { command: `cat ${aDir}/mine.txt 2>&1 || echo unreadable` }, call())).toContain('unreadable');
    const launchers = hosts();
    expect(launchers, 'one shared launcher').toHaveLength(1);
    // The launcher's bridges to its proxy serve both hands: no bridge of a hand's own.
    const listeners = bridges(process.pid);
    expect(listeners.length).toBeGreaterThan(0);
    expect(listeners).toEqual(bridges(launchers[0]!));
    expect(listeners.length).toBeLessThanOrEqual(2);
  });

  it('a hand with another network policy gets a launcher of its own', { timeout: 120_000 }, async () => {
    const c = await provisioner.provision('host-c', { kind: 'sandbox', allowedDomains: ['example.com'] }, { signal });
    open.push(c);
    expect(await c.execute('bash', { command: 'echo up' }, call())).toContain('up');
    expect(hosts()).toHaveLength(2);
  });

  it('a shared launcher’s hand reaches an allowlisted host through the proxy, and nothing else', { timeout: 120_000 }, async () => {
    const server = http.createServer((_req, res) => res.end('hello-from-host'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const h = await provisioner.provision('host-net', { kind: 'sandbox', allowedDomains: ['127.0.0.1'] }, { signal });
      open.push(h);
      const out = await h.execute(
        'bash',
        {
          command: `for i in 1 2 3 4 5; do body=$(NO_PROXY= no_proxy= curl -sS --fail --max-time 3 http://127.0.0.1:${port}/ 2>&1) && break; sleep 0.1; done
echo "ALLOWED:$body"
echo "BY_NAME:$(NO_PROXY= no_proxy= curl -sS --max-time 3 http://localhost:${port}/ 2>&1)"
(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo DIRECT_CONNECTED
echo DONE`,
        },
        call(),
      );
      expect(out).toContain('ALLOWED:hello-from-host');
      expect(out).toContain('BY_NAME:Connection blocked by network allowlist');
      expect(out).not.toContain('DIRECT_CONNECTED');
      expect(out).toContain('DONE');
    } finally {
      server.close();
    }
  });

  it('an unrestricted shared launcher’s hand reaches a listed private address, and no unlisted one', { timeout: 120_000 }, async () => {
    const listed = http.createServer((_req, res) => res.end('listed-body'));
    const other = http.createServer((_req, res) => res.end('other-body'));
    await Promise.all([listed, other].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    const [port, otherPort] = [listed, other].map((s) => (s.address() as AddressInfo).port);
    try {
      const h = await provisioner.provision('host-open', { kind: 'sandbox', network: 'unrestricted', allowedDomains: [`127.0.0.1:${port}`] }, { signal });
      open.push(h);
      const out = await h.execute(
        'bash',
        {
          command: `for i in 1 2 3 4 5; do body=$(NO_PROXY= no_proxy= curl -sS --fail --max-time 3 http://127.0.0.1:${port}/ 2>&1) && break; sleep 0.1; done
echo "LISTED:$body"
echo "LOOPBACK:$(NO_PROXY= no_proxy= curl -sS -i --max-time 3 https://127.0.0.1:${otherPort}/ 2>&1)"`,
        },
        call(),
      );
      expect(out).toContain('LISTED:listed-body');
      expect(out).toContain("403 a loopback address is reachable only when listed in the environment's allowed_hosts");
      expect(out).not.toContain('other-body');
    } finally {
      listed.close();
      other.close();
    }
  });

  it('a released hand leaves its launcher serving the others', { timeout: 120_000 }, async () => {
    const [launcher] = hosts();
    const d = await provisioner.provision('host-d', { kind: 'sandbox' }, { signal });
    await d.close();
    expect(running(launcher!)).toBe(true);
    expect(await open[0]!.execute('bash', { command: 'echo still' }, call())).toContain('still');
  });
});

describe('a shared launcher that dies', () => {
  it('takes its hands along, and the next hand of its policy starts on a new launcher', { timeout: 120_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-hand-host-dies-'));
    const provisioner = createLocalHandProvisioner({ dataDir: path.join(dir, 'data'), workspacesDir: path.join(dir, 'ws'), sharedLaunchers: true });
    const before = new Set(hosts());
    try {
      const a = await provisioner.provision('dies-a', { kind: 'sandbox' }, { signal });
      const launcher = hosts().find((p) => !before.has(p));
      expect(launcher).toBeDefined();
      const hand = descendants(launcher!).filter((p) => /paddock-hand/.test(cmdline(p)));
      expect(hand.length).toBeGreaterThan(0);
      process.kill(launcher!, 'SIGKILL');
      // At once, before this process has seen the launcher exit.
      const b = await provisioner.provision('dies-b', { kind: 'sandbox' }, { signal });
      expect(await b.execute('bash', { command: 'echo on-a-new-launcher' }, call())).toContain('on-a-new-launcher');
      expect(await Promise.race([a.lost.then(() => 'lost'), new Promise((r) => setTimeout(() => r('live'), 10_000))])).toBe('lost');
      expect(hand.filter(running)).toEqual([]);
      // What the killed launcher could not remove, the next one does.
      const leftovers = () => fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith(`paddock-launcher-${launcher}-`) || n.startsWith(`paddock-launcher-ctl-${launcher}-`));
      expect(leftovers()).toEqual([]);
      await b.close();
      await a.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the hand request', () => {
  const policy = { workspace: '/w', tmpDir: '/t', allowWrite: [], denyRead: [], allowRead: [], allowedDomains: [], network: 'limited', limits: { maxProcs: 0, memoryMb: 0, fileSizeMb: 0 } };

  it('is refused naming what is wrong: bad JSON, a bad id, no command, a bad policy', () => {
    expect(() => parseHostRequest('{')).toThrow(/not valid JSON/);
    expect(() => parseHostRequest(JSON.stringify({ id: 'a b', policy, argv: ['x'], env: {} }))).toThrow(/id/);
    expect(() => parseHostRequest(JSON.stringify({ id: 'a', policy, argv: [], env: {} }))).toThrow(/argv/);
    expect(() => parseHostRequest(JSON.stringify({ id: 'a', policy: { ...policy, workspace: 'rel' }, argv: ['x'], env: {} }))).toThrow(/workspace/);
    expect(parseHostRequest(JSON.stringify({ id: 'a', policy, argv: ['x'], env: { A: '1' } })).env).toEqual({ A: '1' });
    // A native hand's request: the launcher serves its tools on an absolute workspace root with whole-number limits.
    const serve = { root: '/w', memoryMb: 0, cpuSeconds: 5 };
    expect(parseHostRequest(JSON.stringify({ id: 'a', policy, argv: ['x'], env: {}, serve })).serve).toEqual(serve);
    expect(parseHostRequest(JSON.stringify({ id: 'a', policy, argv: ['x'], env: {} }))).not.toHaveProperty('serve');
    expect(() => parseHostRequest(JSON.stringify({ id: 'a', policy, argv: ['x'], env: {}, serve: { ...serve, root: 'w' } }))).toThrow(/serve\.root/);
    expect(() => parseHostRequest(JSON.stringify({ id: 'a', policy, argv: ['x'], env: {}, serve: { ...serve, memoryMb: -1 } }))).toThrow(/serve\.memoryMb/);
  });
});
