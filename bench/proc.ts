import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** What the benches read of processes from /proc (Linux): trees, CPU time, memory. */

export function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

export function descendants(root: number): number[] {
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
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10; // USER_HZ 100
  } catch {
    return 0;
  }
}

/** kB fields of a process: resident (VmRSS) and proportional (Pss: shared pages split). */
export function memoryKb(pid: number): { rss: number; pss: number; name: string } {
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

