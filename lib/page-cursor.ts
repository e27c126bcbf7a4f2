import { z } from 'zod';
import { InvalidInputError } from '~/lib/errors';

/**
 * The one codec of list pages' opaque cursors (`next_page`, `prev_cursor`…): base64url JSON of the
 * list it belongs to (`scope`: which list and ordering) followed by the position's values. A cursor
 * from another list, another ordering, or one that does not decode is refused with one message.
 */
export function encodeCursor(scope: string, values: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify([scope, ...values])).toString('base64url');
}

export function decodeCursor<const T extends readonly [z.ZodType, ...z.ZodType[]]>(page: string, scope: string, shape: T): z.output<z.ZodTuple<[...T]>> {
  const schema = z.tuple([z.literal(scope), ...shape] as unknown as [z.ZodLiteral<string>, ...T]);
  try {
    const r = schema.safeParse(JSON.parse(Buffer.from(page, 'base64url').toString('utf8')));
    if (r.success) return (r.data as unknown[]).slice(1) as z.output<z.ZodTuple<[...T]>>;
  } catch {
    // Fall through: any undecodable cursor gets the same message.
  }
  throw new InvalidInputError('page: not a cursor returned by this list (with this ordering)');
}
