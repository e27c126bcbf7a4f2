/**
 * Sandbox hands: cold start without a pool (provision → first tool answer), the memory an idle
 * live hand holds (its whole process tree: launcher, proxy bridges, bubblewrap, paddock-hand),
 * what a hand taken from the warm pool costs, and what a launcher killed outright leaves behind.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Hand } from '~/lib/hand';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { WarmPool } from '~/server/hands/warm-pool';
import { percentile } from '~/bench/stats';
import { Rows, ms, runIfMain, type Row } from '~/bench/table';

const STARTS = 20;
const IDLE_HANDS = 4;
const IDLE_MS = 3_000;
const POOL_TAKES = 5;
const KILLED_LAUNCHERS = 3;

function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

function descendants(root: number): number[] {
  const pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
  const children = new Map<number, number[]>();
  for (const pid of pids) {
    const pp = parentOf(pid);
    if (pp !== null) children.set(pp, [...(children.get(pp) ?? []), pid]);
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(root);
  return out;
}

/** CPU ms a process used, with its children it has reaped (the runtime's probes): utime+stime+cutime+cstime. */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10; // USER_HZ 100
  } catch {
    return 0;
  }
}

/** kB fields of a process: resident (VmRSS) and proportional (Pss: shared pages split). */
function memoryKb(pid: number): { rss: number; pss: number; name: string } {
  const field = (text: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const name = cmd.some((a) => a.includes('sandbox-launcher'))
      ? 'launcher (node)'
      : cmd.some((a) => /paddock-hand/.test(a)) && cmd[0]?.endsWith('node')
        ? 'paddock-hand (node)'
        : path.basename(cmd[0] ?? '?');
    return { rss: field(status, 'VmRSS'), pss: field(rollup, 'Pss'), name };
  } catch {
    return { rss: 0, pss: 0, name: 'gone' };
  }
}

export async function runHandsBench(): Promise<Row[]> {
  const table = new Rows();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-bench-hands-'));
  const provisioner = createLocalHandProvisioner({ dataDir: path.join(dir, 'data'), workspacesDir: path.join(dir, 'ws') });
  const signal = new AbortController().signal;
  let n = 0;
  const start = async (): Promise<Hand> => {
    const hand = await provisioner.provision(`bench-${++n}`, { kind: 'sandbox' }, { signal });
    const out = await hand.execute('bash', { command: 'echo ok' }, { callId: `c-${n}`, signal });
    if (!out.includes('ok')) throw new Error(`hand answered ${out}`);
    return hand;
  };
  try {
    // Warm-up: the bundle build and the sandbox check happen once per server, not per hand.
    await (await start()).close();
    const samples: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      const known = new Set(descendants(process.pid));
      const t0 = performance.now();
      const hand = await start();
      samples.push(performance.now() - t0);
      // CPU time, not wall: it holds with other load on the machine.
      cpu.push(descendants(process.pid).filter((p) => !known.has(p)).reduce((sum, p) => sum + cpuMs(p), 0));
      await hand.close();
    }
    const p50 = percentile(samples, 50);
    const p95 = percentile(samples, 95);
    const cpuP50 = percentile(cpu, 50);
    table.add(`cold start, no pool (provision → first answer), p50 of ${STARTS}`, ms(p50), '≤ 100 ms', p50 <= 100);
    table.add(`cold start, no pool, p95 of ${STARTS}`, ms(p95), '≤ 200 ms', p95 <= 200);
    table.add(`CPU per start (hand's process tree, to first answer), p50 of ${STARTS}`, ms(cpuP50), '≤ 50 ms', cpuP50 <= 50);

    const before = new Set(descendants(process.pid));
    const hands: Hand[] = [];
    for (let i = 0; i < IDLE_HANDS; i++) hands.push(await start());
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const mine = descendants(process.pid).filter((p) => !before.has(p));
    const byName = new Map<string, { rss: number; pss: number; count: number }>();
    let rss = 0;
    let pss = 0;
    for (const pid of mine) {
      const m = memoryKb(pid);
      rss += m.rss;
      pss += m.pss;
      const e = byName.get(m.name) ?? { rss: 0, pss: 0, count: 0 };
      byName.set(m.name, { rss: e.rss + m.rss, pss: e.pss + m.pss, count: e.count + 1 });
    }
    const mb = (kb: number) => `${(kb / 1024 / IDLE_HANDS).toFixed(1)} MB`;
    table.add(`idle live hand: sum RSS of its process tree (mean of ${IDLE_HANDS})`, mb(rss));
    table.add('idle live hand: sum PSS of its tree (shared pages split between processes)', mb(pss), '≤ 15 MB', pss / 1024 / IDLE_HANDS <= 15);
    for (const [name, e] of [...byName].sort((a, b) => b[1].rss - a[1].rss)) {
      table.add(`  of which ${name} ×${e.count / IDLE_HANDS}`, `${mb(e.rss)} RSS, ${mb(e.pss)} PSS`);
    }
    await Promise.all(hands.map((h) => h.close()));

    // A hand taken from the warm pool: already connected, so the take itself is all the wait.
    const pool = new WarmPool(provisioner, { kind: 'sandbox', allowedDomains: [] }, 1).start();
    const takes: number[] = [];
    for (let i = 0; i < POOL_TAKES; i++) {
      await until(() => pool.available > 0, 30_000);
      const t0 = performance.now();
      const hand = await pool.take({ kind: 'sandbox', allowedDomains: [] });
      takes.push(performance.now() - t0);
      await hand?.close();
    }
    await pool.close();
    const takeP95 = percentile(takes, 95);
    table.add(`hand taken from the warm pool (ready), p95 of ${POOL_TAKES}`, ms(takeP95), '≤ 5 ms', takeP95 <= 5);

    // A launcher SIGKILLed (OOM killer, crash): its proxy bridges must not outlive it.
    let left = 0;
    let bridges = 0;
    for (let i = 0; i < KILLED_LAUNCHERS; i++) {
      const known = new Set(descendants(process.pid));
      const hand = await start();
      const tree = descendants(process.pid).filter((p) => !known.has(p));
      const launcher = tree.find((p) => cmdlineOf(p).includes('sandbox-launcher'));
      const socats = tree.filter((p) => /socat UNIX-LISTEN:/.test(cmdlineOf(p)));
      bridges += socats.length;
      if (launcher) process.kill(launcher, 'SIGKILL');
      await until(() => socats.every((p) => cmdlineOf(p) === ''), 3_000);
      left += socats.filter((p) => cmdlineOf(p) !== '').length;
      for (const p of socats) {
        try {
          process.kill(p, 'SIGKILL'); // the bench leaves nothing behind either way
        } catch {
          // gone, as it should be
        }
      }
      await hand.close();
    }
    table.add(`host socat bridges alive 3 s after their launcher's SIGKILL (of ${bridges}, ${KILLED_LAUNCHERS} hands)`, String(left), '0', left === 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return table.rows;
}

runIfMain(import.meta.url, runHandsBench);
