import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rows, type Row } from '~/bench/table';

/**
 * The chaos soak: the chaos test (server/harness/chaos.test.ts, ~1 min in `npm test`) run for
 * PADDOCK_SOAK_SECONDS (default 300): a harness process SIGKILLed at random moments while a dozen
 * scripted sessions work, then every log checked. The test's own assertions decide pass/fail;
 * this tabulates the counts it prints.
 */
const root = fileURLToPath(new URL('../', import.meta.url));
const SECONDS = Number(process.env.PADDOCK_SOAK_SECONDS ?? 300);

interface ChaosFigures {
  seconds: number;
  kills: number;
  killsBeforeReady: number;
  cutMidWork: number;
  sessions: number;
  acks: number;
  events: number;
  requests: number;
  injected: number;
  drainMs: number;
  unfinished: number;
  violations: number;
  workerErrors: number;
}

export async function runSoakBench(): Promise<Row[]> {
  const rows = new Rows();
  const seed = process.env.PADDOCK_CHAOS_SEED ?? String(Date.now() % 1_000_000);
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(path.join(root, 'node_modules/.bin/vitest'), ['run', 'server/harness/chaos.test.ts'], {
      cwd: root,
      env: { ...process.env, PADDOCK_CHAOS_SECONDS: String(SECONDS), PADDOCK_CHAOS_SEED: seed },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (c) => resolve({ code: c, output }));
  });
  const json = /\[chaos-json\] (\{.*\})/.exec(output)?.[1];
  if (!json) {
    rows.add(`chaos soak, ${SECONDS} s (seed ${seed})`, 'no figures: the test failed before its verdict', 'passes', false);
    process.stderr.write(output.slice(-4000));
    return rows.rows;
  }
  const f = JSON.parse(json) as ChaosFigures;
  const passed = code === 0;
  rows.add(`chaos soak (seed ${seed}): SIGKILLs of the harness process`, `${f.kills} in ${f.seconds} s (${f.killsBeforeReady} during start-up)`);
  rows.add('  sessions cut mid-work by a kill (summed)', String(f.cutMidWork));
  rows.add('  sessions / acknowledged user messages / events', `${f.sessions} / ${f.acks} / ${f.events.toLocaleString('en-US')}`);
  rows.add('  model requests (failures injected on purpose)', `${f.requests} (${f.injected})`);
  rows.add('  drain after the last kill', `${(f.drainMs / 1000).toFixed(1)} s`);
  rows.add('  log invariant violations', String(f.violations), '0', f.violations === 0);
  rows.add('  sessions unfinished / worker error logs', `${f.unfinished} / ${f.workerErrors}`, '0 / 0', f.unfinished === 0 && f.workerErrors === 0);
  rows.add('  the chaos test’s verdict (acks kept, answers given)', passed ? 'passed' : `failed (exit ${code})`, 'passes', passed);
  if (!passed) process.stderr.write(output.slice(-4000));
  return rows.rows;
}
