/**
 * Bounded hands, measured on real sandboxed paddock-hand processes: a hand that forks without end
 * or eats memory hits its own limits, while the server (this process) and another session's hand
 * keep answering.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hand } from '~/lib/hand';
import type { HandLimits } from '~/lib/hand-limits';
import { effectiveLimits } from '~/server/hands/sandbox/limits';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { cmdline } from '~/server/hands/testing/processes';

const LIMITS: HandLimits = { maxProcs: 64, memoryMb: 512, fileSizeMb: 10, cpuSeconds: 4 };

let root: string;
let bounded: Hand;
let other: Hand;
let calls = 0;

const run = (hand: Hand, command: string, timeout_ms = 30_000) =>
  hand.execute('bash', { command, timeout_ms }, { callId: `call-${++calls}`, signal: new AbortController().signal });

/** Host processes whose command line is exactly `cmd`. */
function countProcesses(cmd: string): number {
  return fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d) && cmdline(Number(d)).trim() === cmd).length;
}

/** The worst delay of this process's event loop while `work` runs. */
async function loopLag<T>(work: Promise<T>): Promise<{ result: T; worstMs: number }> {
  let worstMs = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worstMs = Math.max(worstMs, now - last - 50);
    last = now;
  }, 50);
  try {
    return { result: await work, worstMs };
  } finally {
    clearInterval(timer);
  }
}

/** How long another hand takes to answer a trivial call. */
async function pingMs(hand: Hand): Promise<number> {
  const t0 = performance.now();
  expect(await run(hand, 'echo pong')).toContain('pong');
  return performance.now() - t0;
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-limits-'));
  const signal = new AbortController().signal;
  const provisioner = createLocalHandProvisioner({ dataDir: path.join(root, 'data'), workspacesDir: path.join(root, 'ws'), limits: LIMITS });
  // The agent asks for more memory than the operator allows, and for less CPU time.
  [bounded, other] = await Promise.all([
    provisioner.provision('lim-a', { kind: 'sandbox', resources: { memory_mb: 100_000, cpu_seconds: 3 } }, { signal }),
    provisioner.provision('lim-b', { kind: 'sandbox' }, { signal }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([bounded?.close(), other?.close()]);
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

describe('bounded hands', () => {
  it("an agent's resources may lower the operator's limits, never raise them", () => {
    expect(effectiveLimits(LIMITS, { memory_mb: 100_000, cpu_seconds: 3 })).toEqual({ ...LIMITS, memoryMb: 512, cpuSeconds: 3 });
    expect(effectiveLimits(LIMITS, undefined)).toEqual(LIMITS);
    expect(effectiveLimits({ ...LIMITS, memoryMb: 0 }, { memory_mb: 300 }).memoryMb).toBe(300);
  });

  it('a hand shows its limits in ulimit even when the agent asked for nothing', async () => {
    const out = await run(other, 'echo "u=$(ulimit -u) v=$(ulimit -v) f=$(ulimit -f) t=$(ulimit -t)"');
    expect(out).toContain(`u=64 v=${512 * 1024} f=${10 * 1024} t=4`);
    // Hard limits: nothing in the hand can raise them again.
    expect(await run(other, 'ulimit -u 100000 && echo RAISED; ulimit -f unlimited && echo RAISED')).not.toContain('RAISED');
    expect(await run(bounded, 'echo "v=$(ulimit -v) t=$(ulimit -t)"')).toContain(`v=${512 * 1024} t=3`);
  });

  it('a runaway process spawner is held to the process limit while the server and another hand answer', async () => {
    // A unique sleep, so the host can count exactly this hand's processes.
    const sleeper = `sleep 30.${process.pid}`;
    const bomb = run(bounded, `for i in $(seq 1000); do ${sleeper} & done; echo ALL_STARTED`, 8_000);
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, countProcesses(sleeper))), 100);
    try {
      await new Promise((r) => setTimeout(r, 2_000));
      const { result: ping, worstMs } = await loopLag(pingMs(other));
      expect(ping).toBeLessThan(3_000);
      expect(worstMs).toBeLessThan(1_000);
      const out = await bomb;
      expect(out).not.toContain('ALL_STARTED');
    } finally {
      clearInterval(watch);
    }
    expect(most).toBeGreaterThan(10);
    expect(most).toBeLessThanOrEqual(LIMITS.maxProcs);
    // The bounded hand itself is still usable once the spawner is gone.
    expect(await run(bounded, 'echo alive')).toContain('alive');
  }, 60_000);

  it('a memory hog is stopped at the memory limit, also when spread over several processes', async () => {
    const hog = loopLag(run(bounded, 'head -c 2000M /dev/zero | tail | wc -c'));
    expect(await pingMs(other)).toBeLessThan(3_000);
    const { result: one, worstMs } = await hog;
    expect(worstMs).toBeLessThan(1_000);
    expect(one).not.toContain(String(2000 * 1024 * 1024));
    // Four processes of 300 MB each: each under the per-process bound, together over the hand's.
    const four = await run(bounded, 'for i in 1 2 3 4; do (head -c 300M /dev/zero | tail | wc -c) & done; wait');
    expect(four.match(new RegExp(`^${300 * 1024 * 1024}$`, 'gm'))?.length ?? 0).toBeLessThan(4);
  }, 60_000);

  it('a new hand removes the empty cgroups of launchers that were killed outright', async () => {
    // The cgroup v1 layout of this machine (pids controller mounted, our group at its root).
    const pids = '/sys/fs/cgroup/pids';
    const stale = path.join(pids, 'paddock-hand-999999999'); // above any pid_max: never a live launcher
    if (!fs.existsSync(pids) || !fs.readFileSync('/proc/self/cgroup', 'utf8').includes(':pids:/\n')) return;
    fs.mkdirSync(stale, { recursive: true });
    const provisioner = createLocalHandProvisioner({ dataDir: path.join(root, 'data'), workspacesDir: path.join(root, 'ws'), limits: LIMITS });
    const hand = await provisioner.provision('lim-c', { kind: 'sandbox' }, { signal: new AbortController().signal });
    try {
      expect(fs.existsSync(stale)).toBe(false);
    } finally {
      await hand.close();
      if (fs.existsSync(stale)) fs.rmdirSync(stale);
    }
  }, 60_000);

  it('a hand cannot write a file over the size limit or spin past its CPU time', async () => {
    const out = await run(bounded, 'dd if=/dev/zero of=big bs=1M count=50 2>/dev/null; stat -c %s big');
    expect(out).toContain(String(10 * 1024 * 1024));
    expect(await run(bounded, 'while :; do :; done', 20_000)).toContain('killed by SIGXCPU');
  }, 60_000);
});
