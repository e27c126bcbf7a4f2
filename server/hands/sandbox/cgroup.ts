import fs from 'node:fs/promises';
import path from 'node:path';
import type { SandboxLimits } from '~/server/hands/sandbox/policy';

/**
 * A control group of one hand: the only bound that really holds for a process count and for
 * memory here. Hands run as uid 0 (mapped to the server's root), and the kernel exempts root from
 * RLIMIT_NPROC; RLIMIT_AS is per process, so 50 processes of 1 GB each pass a 1 GB ulimit. A
 * cgroup counts every process of the hand together. Works with cgroup v1 (pids + memory
 * controllers) and v2 (a writable delegated subtree); where neither is writable, `create`
 * returns null and the hand keeps only its rlimits.
 */
export interface HandCgroup {
  /** Files a process writes its pid to, to move itself (and its future children) in. */
  procsFiles: string[];
  /** Removes the group once its processes are gone. */
  remove(): Promise<void>;
}

const ROOT = '/sys/fs/cgroup';

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}

/** `/proc/self/cgroup` lines → controller name (or '' for v2) → our own group's path. */
async function ownGroups(): Promise<Map<string, string>> {
  const map = new Map<string, string>();
  const text = await fs.readFile('/proc/self/cgroup', 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const [, controllers, p] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (controllers === undefined || p === undefined) continue;
    for (const c of controllers.split(',')) map.set(c, p);
  }
  return map;
}

async function createV1(name: string, limits: SandboxLimits, own: Map<string, string>): Promise<HandCgroup> {
  const dirs: string[] = [];
  try {
    if (limits.maxProcs > 0) {
      const dir = path.join(ROOT, 'pids', own.get('pids') ?? '/', name);
      await fs.mkdir(dir);
      dirs.push(dir);
      await fs.writeFile(path.join(dir, 'pids.max'), String(limits.maxProcs));
    }
    if (limits.memoryMb > 0) {
      const dir = path.join(ROOT, 'memory', own.get('memory') ?? '/', name);
      await fs.mkdir(dir);
      dirs.push(dir);
      const bytes = String(limits.memoryMb * 1024 * 1024);
      await fs.writeFile(path.join(dir, 'memory.limit_in_bytes'), bytes);
      // Where swap is accounted, it counts too; otherwise a hog would just move to swap.
      await fs.writeFile(path.join(dir, 'memory.memsw.limit_in_bytes'), bytes).catch(() => undefined);
    }
  } catch (e) {
    await removeDirs(dirs);
    throw e;
  }
  return { procsFiles: dirs.map((d) => path.join(d, 'cgroup.procs')), remove: () => removeDirs(dirs) };
}

async function createV2(name: string, limits: SandboxLimits, own: Map<string, string>): Promise<HandCgroup> {
  // A v2 group may hold processes or children with controllers, not both: hands go in a child
  // of our own group's parent-level `paddock-hands` group, which holds no process itself.
  const parent = path.join(ROOT, own.get('') ?? '/', 'paddock-hands');
  await fs.mkdir(parent, { recursive: true });
  await fs.writeFile(path.join(parent, 'cgroup.subtree_control'), '+pids +memory');
  const dir = path.join(parent, name);
  await fs.mkdir(dir);
  try {
    if (limits.maxProcs > 0) await fs.writeFile(path.join(dir, 'pids.max'), String(limits.maxProcs));
    if (limits.memoryMb > 0) {
      await fs.writeFile(path.join(dir, 'memory.max'), String(limits.memoryMb * 1024 * 1024));
      await fs.writeFile(path.join(dir, 'memory.swap.max'), '0').catch(() => undefined);
    }
  } catch (e) {
    await removeDirs([dir]);
    throw e;
  }
  return { procsFiles: [path.join(dir, 'cgroup.procs')], remove: () => removeDirs([dir]) };
}

/** Groups are named `<prefix><launcher pid>`, or `<prefix><launcher pid>-<n>` on a launcher shared by hands. */
export const GROUP_PREFIX = 'paddock-hand-';

/**
 * Removes the empty groups of launchers that are gone: one killed outright (SIGKILL with its
 * server) cannot remove its own. rmdir refuses a group that still holds a process.
 */
async function sweepStale(parents: string[]): Promise<void> {
  for (const parent of parents) {
    const names = await fs.readdir(parent).catch(() => [] as string[]);
    for (const name of names) {
      const pid = Number(name.slice(GROUP_PREFIX.length).split('-')[0]);
      if (!name.startsWith(GROUP_PREFIX) || !Number.isInteger(pid) || pid <= 0 || (await exists(`/proc/${pid}`))) continue;
      await fs.rmdir(path.join(parent, name)).catch(() => undefined);
    }
  }
}

/** A group for one hand named `name`, or null when this machine gives us no writable cgroups. */
export async function createHandCgroup(name: string, limits: SandboxLimits): Promise<HandCgroup | null> {
  if (limits.maxProcs === 0 && limits.memoryMb === 0) return null;
  const own = await ownGroups();
  await sweepStale([
    path.join(ROOT, 'pids', own.get('pids') ?? '/'),
    path.join(ROOT, 'memory', own.get('memory') ?? '/'),
    path.join(ROOT, own.get('') ?? '/', 'paddock-hands'),
  ]);
  try {
    if (await exists(path.join(ROOT, 'cgroup.controllers'))) return await createV2(name, limits, own);
    if ((await exists(path.join(ROOT, 'pids'))) && (await exists(path.join(ROOT, 'memory')))) return await createV1(name, limits, own);
  } catch {
    return null;
  }
  return null;
}

/** rmdir, retried briefly: the kernel frees a group only after its last process is reaped. */
async function removeDirs(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    for (let i = 0; i < 20; i++) {
      try {
        await fs.rmdir(dir);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
}
