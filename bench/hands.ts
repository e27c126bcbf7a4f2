/**
 * Sandbox hands: cold start without a pool (provision → first tool answer), the memory an idle
 * live hand holds (its whole process tree: launcher, proxy bridges, bubblewrap, paddock-hand or the
 * native executor), what a hand taken from the warm pool costs, and what a launcher killed
 * outright leaves behind. Both executors (PADDOCK_HAND_EXECUTOR) are measured back to back.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Hand } from '~/lib/hand';
import { createLocalHandProvisioner, type HandExecutor } from '~/server/hands/sandbox/provisioner';
import { WarmPool } from '~/server/hands/warm-pool';
import { percentile } from '~/bench/stats';
import { Rows, ms, runIfMain, type Row } from '~/bench/table';
import { cpuMs, descendants, memoryKb } from '~/bench/proc';

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

const isLauncher = (pid: number) => cmdlineOf(pid).includes('sandbox-launcher');

/** Cold starts and idle memory of one executor's hands. */
async function measure(table: Rows, dir: string, executor: HandExecutor): Promise<void> {
  const provisioner = createLocalHandProvisioner({ dataDir: path.join(dir, 'data'), workspacesDir: path.join(dir, `ws-${executor}`), executor });
  const signal = new AbortController().signal;
  let n = 0;
  const start = async (): Promise<Hand> => {
    const hand = await provisioner.provision(`bench-${executor}-${++n}`, { kind: 'sandbox' }, { signal });
    const out = await hand.execute('bash', { command: 'echo ok' }, { callId: `c-${n}`, signal });
    if (!out.includes('ok')) throw new Error(`hand answered ${out}`);
    return hand;
  };
  const load = () => os.loadavg()[0]!.toFixed(2);
  // Not this executor's: the bench's own helpers (tsx's esbuild), an earlier executor's launcher waiting out its idle minute.
  const before = new Set(descendants(process.pid));
  // Warm-up: the bundle build and the sandbox check happen once per server, not per hand.
  await (await start()).close();
  const samples: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    // Every process under the bench counts, a launcher that was already running (shared by the
    // hands of a network policy) with what it spent on this start.
    const known = new Map(descendants(process.pid).map((p) => [p, cpuMs(p)]));
    const t0 = performance.now();
    const hand = await start();
    samples.push(performance.now() - t0);
    // CPU time, not wall: it holds with other load on the machine.
    cpu.push(descendants(process.pid).reduce((sum, p) => sum + cpuMs(p) - (known.get(p) ?? 0), 0));
    await hand.close();
  }
  const p50 = percentile(samples, 50);
  const p95 = percentile(samples, 95);
  const cpuP50 = percentile(cpu, 50);
  table.add(`[${executor}] cold start, no pool (provision → first answer), p50 of ${STARTS} (load ${load()})`, ms(p50), '≤ 100 ms', p50 <= 100);
  table.add(`[${executor}] cold start, no pool, p95 of ${STARTS}`, ms(p95), '≤ 200 ms', p95 <= 200);
  table.add(`[${executor}] CPU per start (hand's process tree, to first answer), p50 of ${STARTS}`, ms(cpuP50), '≤ 50 ms', cpuP50 <= 50);

  const hands: Hand[] = [];
  for (let i = 0; i < IDLE_HANDS; i++) hands.push(await start());
  await new Promise((r) => setTimeout(r, IDLE_MS));
  // The whole tree under the bench: the hands and the launchers they use (a shared one split between them).
  const mine = descendants(process.pid).filter((p) => !before.has(p));
  const byName = new Map<string, { rss: number; pss: number; count: number }>();
  let rss = 0;
  let pss = 0;
  let launcherPss = 0;
  for (const pid of mine) {
    const m = memoryKb(pid);
    rss += m.rss;
    pss += m.pss;
    if (isLauncher(pid)) launcherPss += m.pss;
    const e = byName.get(m.name) ?? { rss: 0, pss: 0, count: 0 };
    byName.set(m.name, { rss: e.rss + m.rss, pss: e.pss + m.pss, count: e.count + 1 });
  }
  const perHand = (kb: number) => kb / 1024 / IDLE_HANDS;
  const mb = (kb: number) => `${perHand(kb).toFixed(1)} MB`;
  table.add(`[${executor}] idle live hand: sum RSS of its process tree, the shared launcher split between ${IDLE_HANDS} (load ${load()})`, mb(rss));
  table.add(`[${executor}] idle live hand: sum PSS of its tree, the launcher split between ${IDLE_HANDS}`, mb(pss), '≤ 15 MB', perHand(pss) <= 15);
  // The launcher is one per network policy however many hands it serves: what each more hand adds is the rest.
  const own = perHand(pss - launcherPss);
  table.add(`[${executor}] idle live hand: PSS of its own processes (each more hand on a running launcher)`, `${own.toFixed(1)} MB`, '≤ 15 MB', own <= 15);
  const hundred = (launcherPss / 1024 + 100 * own) / 1024;
  table.add(`[${executor}] 100 idle hands of one policy (launcher + 100 × own), estimated`, `${(hundred * 1024).toFixed(0)} MB`, '≤ 1 GB', hundred <= 1);
  for (const [name, e] of [...byName].sort((a, b) => b[1].rss - a[1].rss)) {
    table.add(`  [${executor}] of which ${name} ×${e.count / IDLE_HANDS}`, `${mb(e.rss)} RSS, ${mb(e.pss)} PSS`);
  }
  await Promise.all(hands.map((h) => h.close()));
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
    // Back to back, same machine, same load: paddock-hand (Node) first, then the native executor.
    for (const executor of ['node', 'native'] as const) await measure(table, dir, executor);

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
      const hand = await start();
      // Its launcher, its own or the one it shares (then every hand on it goes too), and any other
      // still here (an earlier executor's, waiting out its idle minute): every bridge must go with them.
      const tree = descendants(process.pid);
      const socats = tree.filter((p) => /socat UNIX-LISTEN:/.test(cmdlineOf(p)));
      bridges += socats.length;
      for (const launcher of tree.filter(isLauncher)) {
        try {
          process.kill(launcher, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
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
