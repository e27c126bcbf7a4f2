import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sleep } from '~/lib/sleep';
import type { ReaperLimits } from '~/server/hands/idle-reaper';
import { type HandScope, HandRegistry } from '~/server/hands/registry';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { cmdline, descendants } from '~/server/hands/testing/processes';
import { WarmPool } from '~/server/hands/warm-pool';
import { Workspaces } from '~/server/hands/workspaces';
import type { ToolUse } from '~/server/harness/core/decide';
import { LiveBus } from '~/server/session/live-bus';
import { runToolCall } from '~/server/harness/steps/tool-call';
import type { Row } from '~/bench/table';
import { Rows, ms } from '~/bench/table';
import { openSqliteStore } from '~/server/session/sqlite-store';

/**
 * Hand lifecycle: how many hand processes (sandbox launcher, bwrap, paddock-hand) and how much
 * resident memory 13 idle sessions hold, with hands kept forever (as before idle suspend), with
 * idle suspend, and with only the cap on live hands; and what resuming a suspended hand costs.
 * Real sandboxed hands, with the default warm pool of 2.
 */
const SESSIONS = 13;
const POOL = 2;

/** Hand processes under this one and the sum of their resident sets (shared pages counted in each). */
function handProcesses(): { count: number; rssMb: number } {
  const pids = descendants(process.pid).filter((p) => /sandbox-launcher|bwrap|paddock-hand/.test(cmdline(p)));
  let kb = 0;
  for (const p of pids) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return { count: pids.length, rssMb: kb / 1024 };
}

async function scenario(label: string, lifecycle: ReaperLimits | undefined, settleMs: number, rows: Rows): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-bench-life-'));
  const store = await openSqliteStore({ file: path.join(dir, 'data', 'paddock.sqlite') });
  const provisioner = createLocalHandProvisioner({ dataDir: path.join(dir, 'data'), workspacesDir: path.join(dir, 'hands') });
  const pool = new WarmPool(provisioner, { kind: 'sandbox', allowedDomains: [] }, POOL).start();
  const hands = new HandRegistry({
    store,
    live: new LiveBus(),
    provisioners: { sandbox: provisioner },
    defaultKind: 'sandbox',
    pool,
    workspaces: new Workspaces(path.join(dir, 'hands')),
    ...(lifecycle ? { lifecycle } : {}),
  });
  let n = 0;
  const call = (scope: HandScope, command: string) =>
    runToolCall(hands, scope, { id: `sevt_bench${++n}`, seq: 0, name: 'bash', input: { command } } as unknown as ToolUse, scope.signal);
  try {
    const scopes: HandScope[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const s = await store.createSession({});
      scopes.push({ sessionId: s.id, signal: new AbortController().signal, emit: (e, key) => store.emitEvent(s.id, e, { idempotencyKey: key }) });
    }
    // A few at a time, as sessions arrive on a small server.
    for (let i = 0; i < scopes.length; i += 3) await Promise.all(scopes.slice(i, i + 3).map((s) => call(s, 'echo work > out.txt')));
    await sleep(settleMs);
    const held = handProcesses();
    rows.add(`${SESSIONS} idle sessions, ${label}: hand processes`, `${held.count} (${hands.liveHands().length} hands + pool ${pool.available})`);
    rows.add(`${SESSIONS} idle sessions, ${label}: their RSS`, `${held.rssMb.toFixed(0)} MB`);
    if (lifecycle) {
      const t0 = performance.now();
      const r = await call(scopes[0]!, 'cat out.txt');
      const resumed = (await store.getEvents(scopes[0]!.sessionId)).some((e) => e.type === 'hand.resumed');
      rows.add(`${label}: a call on a suspended hand (resume + run)`, `${ms(performance.now() - t0)}${resumed && r.text.includes('work') ? '' : ' (NOT resumed)'}`);
    }
  } finally {
    await hands.closeAll();
    await pool.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runLifecycleBench(): Promise<Row[]> {
  const rows = new Rows();
  await scenario('hands kept (no idle suspend, no cap)', undefined, 1_000, rows);
  await scenario('PADDOCK_HAND_IDLE_SECONDS=2', { idleMs: 2_000, maxLive: 16 }, 4_000, rows);
  await scenario('PADDOCK_MAX_LIVE_HANDS=4 only', { idleMs: Number.POSITIVE_INFINITY, maxLive: 4 }, 1_000, rows);
  return rows.rows;
}
