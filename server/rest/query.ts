import { z } from 'zod';
import { describeZodError } from '~/lib/events';
import { ApiError } from '~/server/rest/api-error';

/**
 * A query string as an object for zod: `a[]=x&a[]=y` (the SDK's array format) and repeated keys
 * become arrays; everything else stays a string for the schema to coerce.
 */
export function queryObject(q: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [rawKey, value] of q) {
    const isArray = rawKey.endsWith('[]');
    const key = isArray ? rawKey.slice(0, -2) : rawKey;
    const prev = out[key];
    if (prev === undefined) out[key] = isArray ? [value] : value;
    else out[key] = Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

export function parseInput<S extends z.ZodType>(schema: S, input: unknown, where: 'query' | 'body'): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw new ApiError('invalid_request_error', `${where}: ${describeZodError(r.error)}`);
  return r.data;
}

export const Limit = (max: number, fallback: number) => z.coerce.number().int().min(1).max(max).default(fallback);
export const Bool = z.enum(['true', 'false']).transform((v) => v === 'true');
export const Page = z.string().min(1).max(500).optional();
/** A one-or-many query value as a list. */
export const List = <T extends z.ZodType>(item: T) => z.preprocess((v) => (v === undefined || Array.isArray(v) ? v : [v]), z.array(item).max(50)).optional();
/** Query params the SDK always may send and that change nothing here. */
export const CommonQuery = { beta: z.string().optional() };

const Time = z.iso.datetime({ offset: true }).optional();
/** `created_at[gt|gte|lt|lte]`, as the SDK sends them on the lists that filter by creation time. */
export const CreatedAtQuery = { 'created_at[gt]': Time, 'created_at[gte]': Time, 'created_at[lt]': Time, 'created_at[lte]': Time };
export type TimeRange = { gt?: string; gte?: string; lt?: string; lte?: string };
/** The bounds given, as the stores take them. */
export function createdAtRange(q: { [K in keyof typeof CreatedAtQuery]?: string }): TimeRange {
  const at: TimeRange = { gt: q['created_at[gt]'], gte: q['created_at[gte]'], lt: q['created_at[lt]'], lte: q['created_at[lte]'] };
  return Object.fromEntries(Object.entries(at).filter(([, v]) => v !== undefined));
}
