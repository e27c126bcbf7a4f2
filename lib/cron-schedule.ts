import { Cron } from 'croner';
import { z } from 'zod';

/**
 * A deployment's schedule: a 5-field POSIX cron expression (minute hour day-of-month month
 * day-of-week; 0 and 7 are Sunday) read as wall-clock time in an IANA timezone. Parsing and next
 * times are croner's; extended syntax (seconds, years, L W # ?, @daily) is refused by name.
 */
export const ScheduleParams = z
  .object({
    type: z.literal('cron'),
    expression: z.string().trim().min(9).max(200),
    timezone: z.string().min(1).max(64),
  })
  .strict()
  .superRefine((s, ctx) => {
    const why = expressionProblem(s.expression);
    if (why) ctx.addIssue({ code: 'custom', path: ['expression'], message: why });
    if (!validTimezone(s.timezone)) ctx.addIssue({ code: 'custom', path: ['timezone'], message: `unknown IANA timezone ${JSON.stringify(s.timezone)}` });
  });
export type ScheduleParams = z.infer<typeof ScheduleParams>;

function validTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function expressionProblem(expression: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) return `must have 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}`;
  if (/[LW#?@]/i.test(expression.replace(/[A-Za-z]{3}/g, (m) => (/^(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|sun|mon|tue|wed|thu|fri|sat)$/i.test(m) ? '' : m)))) {
    return 'extended cron syntax (L, W, #, ?, @shortcuts) is not supported';
  }
  try {
    cronOf({ type: 'cron', expression, timezone: 'UTC' });
    return null;
  } catch (e) {
    return `not a valid cron expression: ${e instanceof Error ? e.message : String(e)}`;
  }
}

function cronOf(s: ScheduleParams): Cron {
  // No callback: croner only computes times here, it never runs anything on a timer.
  return new Cron(s.expression, { timezone: s.timezone, mode: '5-part' });
}

/** The first scheduled time strictly after `after`; null when the expression never fires again. */
export function nextFireAfter(s: ScheduleParams, after: Date): Date | null {
  return cronOf(s).nextRun(after);
}

/** Up to `n` scheduled times strictly after `after`. */
export function upcomingFires(s: ScheduleParams, after: Date, n: number): Date[] {
  return cronOf(s).nextRuns(n, after);
}

/**
 * The newest scheduled time at or before `now`, not before `from`: the one time a trigger that
 * was due at `from` runs for after a gap (older missed times are skipped). Null: none in range.
 */
export function latestDue(s: ScheduleParams, from: Date, now: Date): Date | null {
  if (from.getTime() > now.getTime()) return null;
  const [prev] = cronOf(s).previousRuns(1, new Date(now.getTime() + 1));
  if (!prev || prev.getTime() < from.getTime()) return null;
  return prev;
}
