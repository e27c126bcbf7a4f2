import { readFileSync, readdirSync } from 'node:fs';

/** Process helpers for tests that check what a hand leaves behind (Linux /proc). */

/** The fields of /proc/<pid>/stat after the command name: state first, then the parent pid. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** True while the process exists and is not a zombie (PID 1 here may never reap orphans). */
export function running(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== null && fields[0] !== 'Z';
}

/** A process's command line, arguments joined by spaces ('' once it is gone). */
export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** The running (non-zombie) descendants of a process. */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const fields = statFields(Number(d));
    if (fields && fields[0] !== 'Z') parent.set(Number(d), Number(fields[1]));
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [pid, pp] of parent) {
      if (pp !== p) continue;
      out.push(pid);
      walk(pid);
    }
  };
  walk(root);
  return out;
}

/** Polls `check` every 50 ms until it holds or `ms` pass; its last answer. */
export async function eventually(check: () => boolean, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}
