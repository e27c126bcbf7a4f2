/**
 * Where a sandbox hand's start-up CPU and its idle memory go, per process and per launcher phase:
 * a measuring script, not a timed test (`node --conditions=react-server --import tsx bench/hand-profile.ts`).
 *
 * CPU is read from /proc/<pid>/stat (utime+stime, plus cutime+cstime of children already reaped,
 * so the runtime's short probes count too) over the hand's process tree, and the launcher's own
 * phases from its `PADDOCK_LAUNCHER_TIMINGS` marks: CPU-time figures hold with other load on the
 * machine, wall-clock ones do not. Memory is smaps_rollup Pss summed over the tree.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { buildHandSnapshot, handBundleDir } from '~/server/hands/paddock-hand/bundle';
import { buildLauncherBundle } from '~/server/hands/sandbox/launcher-bundle';
import { runtimeTmpDir, sandboxPolicy, TIMINGS_ENV } from '~/server/hands/sandbox/policy';
import { handCommand } from '~/server/hands/sandbox/provisioner';
import { launcherInvocation } from '~/server/hands/sandbox/spawn-sandboxed';
import { descendants } from '~/server/hands/testing/processes';

const STARTS = Number(process.env.PROFILE_STARTS ?? 10);
const TICK_MS = 10; // USER_HZ is 100 on Linux

function statCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields 14-17 (1-based) are utime stime cutime cstime; f[0] is field 3
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS;
  } catch {
    return 0;
  }
}

function pssKb(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function nameOf(pid: number): string {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    if (cmd.some((a) => a.includes('sandbox-launcher'))) return 'launcher (node)';
    if (cmd[0]?.endsWith('node') && cmd.some((a) => a.includes('paddock-hand'))) return 'paddock-hand (node)';
    return path.basename(cmd[0] ?? '?');
  } catch {
    return 'gone';
  }
}

/** CPU ms of `sh -c cmd` and all it waited for, by bash's own `times` (children's user+sys). */
async function childCpuMs(cmd: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const child = spawn('/bin/bash', ['-c', `${cmd} >/dev/null 2>&1; times`], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((r) => child.once('close', r));
  // second line: children's "XmY.YYYs XmY.YYYs"
  const line = out.trim().split('\n')[1] ?? '';
  return [...line.matchAll(/(\d+)m([\d.]+)s/g)].reduce((sum, m) => sum + (Number(m[1]) * 60 + Number(m[2])) * 1000, 0);
}

/** The launcher's env for a bare start (no policy: it loads, then stops with a usage error). */
function launcherEnv(launcher: string): NodeJS.ProcessEnv {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', NODE_COMPILE_CACHE: path.join(path.dirname(launcher), '.compile-cache') };
  return env as NodeJS.ProcessEnv;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const fmt = (x: number) => x.toFixed(1).padStart(7);

async function main(): Promise<void> {
  const root = process.cwd();
  const [hand, launcher] = await Promise.all([buildHandSnapshot(root), buildLauncherBundle(root)]);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-hand-profile-'));
  const node = process.execPath;
  const runs = 5;
  const base = { node: [] as number[], hand: [] as number[], launcher: [] as number[], bwrap: [] as number[] };
  for (let i = 0; i < runs; i++) {
    base.node.push(await childCpuMs(`${node} -e 0`));
    base.hand.push(await childCpuMs(`${handCommand(hand).join(' ')} --help`));
    base.launcher.push(await childCpuMs(`${node} ${launcher}`, launcherEnv(launcher)));
    base.bwrap.push(await childCpuMs('bwrap --ro-bind / / --unshare-all --die-with-parent true'));
  }
  console.log(`pieces alone, CPU ms (mean of ${runs}):`);
  console.log(`  node -e 0                              ${fmt(mean(base.node))}`);
  console.log(`  paddock-hand started (--help)          ${fmt(mean(base.hand))}`);
  console.log(`  launcher bundle loaded (usage error)   ${fmt(mean(base.launcher))}`);
  console.log(`  bare bwrap true                        ${fmt(mean(base.bwrap))}`);

  const phases = new Map<string, { cpu: number[]; wall: number[] }>();
  const perProcCpu = new Map<string, number[]>();
  const perProcPss = new Map<string, number[]>();
  const totals: { cpu: number; wall: number; pss: number }[] = [];
  for (let i = 0; i < STARTS; i++) {
    const workspace = path.join(dir, `ws-${i}`);
    const policy = sandboxPolicy({ workspace, dataDir: path.join(dir, 'data'), workspacesDir: dir, serverDir: root, handCode: [handBundleDir()] });
    const inv = launcherInvocation({ policy, command: [...handCommand(hand), '--workspace', workspace, '--stdio'], launcher });
    const t0 = performance.now();
    // PROFILE_LAUNCHER_FLAGS: V8 flags to try on the launcher, before they go into spawn-sandboxed.ts.
    const extra = (process.env.PROFILE_LAUNCHER_FLAGS ?? '').split(' ').filter(Boolean);
    const transport = new StdioClientTransport({ command: inv.command, args: [...extra, ...inv.args], env: { ...inv.env, [TIMINGS_ENV]: '1' }, cwd: dir, stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'profile', version: '0' });
    await client.connect(transport);
    const out = await client.callTool({ name: 'bash', arguments: { command: 'echo ok' } });
    const wall = performance.now() - t0;
    if (!JSON.stringify(out).includes('ok')) throw new Error(`hand answered ${JSON.stringify(out)}`);
    const top = transport.pid!;
    await new Promise((r) => setTimeout(r, 1_500)); // settle: idle memory, not start-up peaks
    const tree = [top, ...descendants(top)];
    let cpu = 0;
    let pss = 0;
    for (const pid of tree) {
      const name = nameOf(pid);
      const c = statCpuMs(pid);
      const m = pssKb(pid) / 1024;
      cpu += c;
      pss += m;
      perProcCpu.set(name, [...(perProcCpu.get(name) ?? []), c]);
      perProcPss.set(name, [...(perProcPss.get(name) ?? []), m]);
    }
    // The tree's CPU counts every process once: a child reaped by its parent is in the parent's cutime.
    totals.push({ cpu, wall, pss });
    for (const m of stderr.matchAll(/timing (\S+) cpu=([\d.]+) wall=([\d.]+)/g)) {
      const e = phases.get(m[1]!) ?? { cpu: [], wall: [] };
      e.cpu.push(Number(m[2]));
      e.wall.push(Number(m[3]));
      phases.set(m[1]!, e);
    }
    await client.close();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(policy.tmpDir, { recursive: true, force: true });
    rmSync(runtimeTmpDir(policy), { recursive: true, force: true });
  }
  console.log(`\nlauncher phases (its own CPU, mean of ${STARTS}):      cpu ms   wall ms`);
  for (const [phase, e] of phases) console.log(`  ${phase.padEnd(40)} ${fmt(mean(e.cpu))}   ${fmt(mean(e.wall))}`);
  console.log(`\nper process after first answer (mean per hand):       cpu ms   PSS MB`);
  for (const [name, c] of perProcCpu) {
    console.log(`  ${name.padEnd(40)} ${fmt(c.reduce((a, b) => a + b, 0) / STARTS)}   ${fmt((perProcPss.get(name) ?? []).reduce((a, b) => a + b, 0) / STARTS)}`);
  }
  const sorted = totals.map((t) => t.wall).sort((a, b) => a - b);
  console.log(`\nwhole tree: CPU ${mean(totals.map((t) => t.cpu)).toFixed(0)} ms, PSS ${mean(totals.map((t) => t.pss)).toFixed(1)} MB, start→first answer p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms (wall, load ${os.loadavg()[0]!.toFixed(2)})`);
  rmSync(dir, { recursive: true, force: true });
}

await main();
