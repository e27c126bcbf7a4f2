import { InvalidInputError } from '~/lib/errors';

/** A time bound as the stores compare it (UTC ISO-8601, which sorts as text); a bad one is the caller's mistake, named. */
export function isoTime(name: string, value: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new InvalidInputError(`${name}: not a time (${value.slice(0, 40)})`);
  return new Date(ms).toISOString();
}
