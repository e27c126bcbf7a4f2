import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** The benchmark's result table: rows with an optional goal, printed as aligned plain text. */

export interface Row {
  benchmark: string;
  result: string;
  goal: string;
  /** null: informational, no goal. */
  ok: boolean | null;
}

/** Collects rows; `add(benchmark, result)` is an informational row, with a goal it is checked. */
export class Rows {
  readonly rows: Row[] = [];

  add(benchmark: string, result: string, goal = '—', ok: boolean | null = null): void {
    this.rows.push({ benchmark, result, goal, ok });
  }
}

export const ms = (x: number): string => `${x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0)} ms`;
export const perSec = (x: number): string => `${Math.round(x).toLocaleString('en-US')} ev/s`;
export const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;

/** Results by row label, as `PADDOCK_BENCH_SAVE` writes them: what a later run prints as "before". */
export type Saved = Record<string, string>;

/** The rows with a "before" column from a saved run (— for a row it did not have). */
export function withBefore(table: readonly Row[], before: Saved | null): (Row & { before: string | null })[] {
  return table.map((r) => ({ ...r, before: before ? (before[r.benchmark] ?? '—') : null }));
}

function readSaved(file: string | undefined): Saved | null {
  if (!file || !existsSync(file)) return null;
  return JSON.parse(readFileSync(file, 'utf8')) as Saved;
}

/**
 * Prints a table. `PADDOCK_BENCH_BEFORE=file` adds a "before" column from an earlier run's
 * `PADDOCK_BENCH_SAVE=file` (every table of a run merges into that file), so a change is judged
 * row by row against what was measured before it.
 */
export function printTable(table: readonly Row[]): void {
  const save = process.env.PADDOCK_BENCH_SAVE;
  if (save) writeFileSync(save, `${JSON.stringify({ ...readSaved(save), ...Object.fromEntries(table.map((r) => [r.benchmark, r.result])) }, null, 1)}\n`);
  const rows = withBefore(table, readSaved(process.env.PADDOCK_BENCH_BEFORE));
  const showBefore = rows.some((r) => r.before !== null);
  const header = { benchmark: 'benchmark', before: 'before', result: 'result', goal: 'goal', ok: 'ok?' };
  const cells = rows.map((r) => ({ ...r, before: r.before ?? '', ok: r.ok === null ? '' : r.ok ? 'yes' : 'NO' }));
  const w = {
    benchmark: Math.max(header.benchmark.length, ...cells.map((c) => c.benchmark.length)),
    before: Math.max(header.before.length, ...cells.map((c) => c.before.length)),
    result: Math.max(header.result.length, ...cells.map((c) => c.result.length)),
    goal: Math.max(header.goal.length, ...cells.map((c) => c.goal.length)),
  };
  const line = (c: { benchmark: string; before: string; result: string; goal: string; ok: string }) =>
    `${c.benchmark.padEnd(w.benchmark)}  ${showBefore ? `${c.before.padStart(w.before)}  ` : ''}${c.result.padStart(w.result)}  ${c.goal.padEnd(w.goal)}  ${c.ok}`.trimEnd();
  console.log('');
  console.log(line(header));
  console.log(`${'─'.repeat(w.benchmark)}  ${showBefore ? `${'─'.repeat(w.before)}  ` : ''}${'─'.repeat(w.result)}  ${'─'.repeat(w.goal)}  ${'─'.repeat(3)}`);
  for (const c of cells) console.log(line(c));
}

/**
 * Lets a bench file also run on its own (`node --conditions=react-server --import tsx bench/x.ts`):
 * runs and prints its table when the file is the entry point, not when `bench/run.ts` imports it.
 */
export function runIfMain(moduleUrl: string, run: () => Promise<readonly Row[]>): void {
  if (process.argv[1] === undefined || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  const t0 = performance.now();
  run().then(
    (rows) => {
      printTable(rows);
      console.log(`total ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    },
    (e: unknown) => {
      console.error(e);
      process.exitCode = 1;
    },
  );
}
