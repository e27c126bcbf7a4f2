import { DynamicModule, type SelectQueryBuilder } from 'kysely';
import { isoTime } from '~/lib/iso-time';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '~/lib/page-cursor';

const dynamic = new DynamicModule();

export type Walk = 'asc' | 'desc';

/** A position in a keyset walk: the sort key of the last row seen and, when the key is not unique, its id. */
export interface KeysetPosition {
  key: string | number;
  id?: string;
}

/**
 * The one keyset walk of every list: rows strictly after `after` in the `walk` direction, ordered by
 * `key` (then `id`, when the key is not unique), one more row than the page so the caller knows
 * whether another page exists. Both keys must sort the same in SQLite and PostgreSQL (ISO-8601
 * times, prefixed ULIDs and integers do).
 */
export function keysetWalk<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  o: { key: string; id?: string; walk: Walk; after: KeysetPosition | null; limit: number },
): SelectQueryBuilder<DB, TB, O> {
  const key = dynamic.ref<string>(o.key);
  const cmp = o.walk === 'asc' ? '>' : '<';
  let q = query;
  const after = o.after;
  if (after) {
    if (o.id === undefined) q = q.where(key, cmp, after.key);
    else {
      const id = dynamic.ref<string>(o.id);
      const afterId = after.id ?? '';
      q = q.where((eb) => eb.or([eb(key, cmp, after.key), eb.and([eb(key, '=', after.key), eb(id, cmp, afterId)])]));
    }
  }
  q = q.orderBy(key, o.walk);
  if (o.id !== undefined) q = q.orderBy(dynamic.ref<string>(o.id), o.walk);
  return q.limit(o.limit + 1);
}

/** A page of a list as the API answers it: its rows, and the cursor of the next page when there is one. */
export interface ListPage<T> {
  data: T[];
  next_page: string | null;
}

/** The page of a walk's rows (at most `limit`) and the next page's cursor when there is one more. */
export function pageOf<R>(rows: R[], limit: number, cursorOf: (last: R) => string): ListPage<R> {
  const data = rows.slice(0, limit);
  const last = data.at(-1);
  return { data, next_page: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}

export interface TimeRange {
  gt?: string;
  gte?: string;
  lt?: string;
  lte?: string;
}

/** `created_at[gt|gte|lt|lte]` on a list: each bound an ISO-8601 time (refused by name otherwise). */
export function whereTimeRange<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, column: string, name: string, at: TimeRange | undefined): SelectQueryBuilder<DB, TB, O> {
  if (!at) return query;
  const col = dynamic.ref<string>(column);
  let q = query;
  if (at.gt !== undefined) q = q.where(col, '>', isoTime(`${name}.gt`, at.gt));
  if (at.gte !== undefined) q = q.where(col, '>=', isoTime(`${name}.gte`, at.gte));
  if (at.lt !== undefined) q = q.where(col, '<', isoTime(`${name}.lt`, at.lt));
  if (at.lte !== undefined) q = q.where(col, '<=', isoTime(`${name}.lte`, at.lte));
  return q;
}

/**
 * The usual list page: newest first by (created_at, id), its cursors scoped to the list (`scope`),
 * so a cursor from another list is refused rather than silently misread.
 */
export async function newestFirst<DB, TB extends keyof DB, O extends { created_at: string; id: string }>(
  query: SelectQueryBuilder<DB, TB, O>,
  scope: string,
  page: string | null | undefined,
  limit: number,
): Promise<ListPage<O>> {
  const after = page ? decodeCursor(page, scope, [z.string(), z.string()]) : null;
  const rows = await keysetWalk(query, { key: 'created_at', id: 'id', walk: 'desc', after: after && { key: after[0], id: after[1] }, limit }).execute();
  return pageOf(rows, limit, (last) => encodeCursor(scope, [last.created_at, last.id]));
}
