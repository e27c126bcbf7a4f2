import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '~/lib/sleep';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolResultCount, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { WorkerProcess } from '~/server/harness/testing/worker-process';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { cmdline, descendants, running } from '~/server/hands/testing/processes';

/**
 * Nothing outlives its server: a real server process (chaos-worker.ts) with a live sandbox hand
 * (launcher, the runtime's socat bridges to its proxy, bwrap, paddock-hand) is SIGKILLed, alone
 * (as the OOM killer does) or with its process group (as a crash of a whole service does); within
 * a few seconds no process it started for the hand is left, socat bridges included.
 */


async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** Where a process stands ('' once it is gone): a hand's processes stand in its workspace. */
function cwdOf(pid: number): string {
  try {
    return fs.readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return '';
  }
}

/** Every live process standing under `dir`, whoever its parent is now (an orphan is init's). */
function standingIn(dir: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => running(pid) && cwdOf(pid).replace(/ \(deleted\)$/, '').startsWith(`${dir}/`));
}

const HAND_PROCESS = /sandbox-launcher|socat|bwrap|paddock-hand|apply-seccomp/;

describe('nothing outlives its server', () => {
  let dir: string;
  let fake: FakeMessagesApi;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-no-orphans-'));
    fake = await startFakeMessagesApi({
      fallback: (req) => (toolResultCount(req) === 0 ? toolUseResponse('bash', { command: 'echo up' }) : textResponse('done')),
    });
  });

  afterEach(async () => {
    for (const w of workers.splice(0)) await w.kill();
  });

  afterAll(async () => {
    await fake?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it.for([
    ['the server process alone (as the OOM killer does)', 'alone'],
    ['the server with its process group', 'group'],
    ['its hand’s launcher and then the server (as an OOM killer picking both does)', 'launcher-first'],
  ] as const)('a SIGKILL of %s leaves no launcher, socat bridge, bwrap or paddock-hand running', { timeout: 90_000 }, async ([, how], { annotate }) => {
    const data = path.join(dir, `data-${how}`);
    const workspaces = path.join(dir, `hands-${how}`);
    fs.mkdirSync(data, { recursive: true });
    const { DATABASE_URL: _db, ANTHROPIC_AUTH_TOKEN: _token, ...inherited } = process.env;
    const w = new WorkerProcess(
      {
        ...inherited,
        PADDOCK_DATA_DIR: data,
        PADDOCK_WORKSPACES_DIR: workspaces,
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_API_KEY: 'no-orphans-test-key',
        PADDOCK_DEFAULT_HAND: 'sandbox',
        PADDOCK_WARM_POOL: '0',
        PADDOCK_LEASE_TTL_MS: '500',
        PADDOCK_SWEEP_MS: '100',
      },
      path.join(dir, `${how}.log`),
    );
    workers.push(w);
    const store = await openSqliteStore({ file: path.join(data, 'paddock.sqlite') });
    try {
      await w.start().ready;
      const session = await store.createSession({ title: 'no orphans' });
      await store.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: 'go' }] });
      await waitFor(
        'the turn to end on a live sandbox hand',
        async () => ((await store.getEvents(session.id)).some((e) => e.type === 'session.status_idle') ? true : undefined),
        60_000,
      );

      const hand = descendants(w.pid!).filter((p) => HAND_PROCESS.test(cmdline(p)));
      const names = hand.map((p) => cmdline(p).split(' ')[0]!.split('/').at(-1));
      // The hand is live and networked: its proxy's host-side socat bridge runs beside the launcher.
      expect(hand.some((p) => /^\S*socat UNIX-LISTEN:/.test(cmdline(p))), `a host-side socat bridge among ${names.join(', ')}`).toBe(true);
      expect(standingIn(workspaces).length, 'the hand processes stand in its workspace').toBeGreaterThan(0);

      const t0 = performance.now();
      if (how === 'launcher-first') {
        // The launcher dies before it can stop the runtime's bridges (no reset(), no exit handler).
        const launcher = hand.find((p) => cmdline(p).includes('sandbox-launcher'));
        expect(launcher, 'the hand’s launcher').toBeDefined();
        process.kill(launcher!, 'SIGKILL');
        await waitFor('the launcher to die', () => (running(launcher!) ? undefined : true), 5_000);
      }
      if (how === 'group') await w.kill();
      else await w.killAlone();
      const left = () => [...new Set([...hand.filter(running), ...standingIn(workspaces)])];
      await waitFor('every hand process to end', () => (left().length === 0 ? true : undefined), 10_000).catch(() => undefined);
      const survivors = left().map((p) => `${p} ${cmdline(p)}`);
      expect(survivors, 'processes the killed server started for its hand').toEqual([]);
      const what = { alone: 'the server alone', group: 'the server’s group', 'launcher-first': 'the launcher, then the server' }[how];
      const line = `SIGKILL of ${what}: ${hand.length} hand processes (${names.join(', ')}), all gone ${Math.round(performance.now() - t0)} ms after`;
      await annotate(line);
      process.stdout.write(`[no-orphans] ${line}\n`);
    } finally {
      await store.close();
    }
  });
});
