import { InvalidInputError } from '~/lib/errors';

/**
 * List pages' opaque cursors (`next_page`): the sort key and id of the last row, base64url JSON.
 * Anything that does not decode is refused with one message, whatever was wrong with it.
 */
export function encodePage(key: string, id: string): string {
  return Buffer.from(JSON.stringify([key, id])).toString('base64url');
}

export function decodePage(page: string): { key: string; id: string } {
  try {
    const v: unknown = JSON.parse(Buffer.from(page, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2) {
      const [key, id] = v as unknown[];
      if (typeof key === 'string' && typeof id === 'string') return { key, id };
    }
  } catch {
    // Fall through: any undecodable cursor gets the same message.
  }
  throw new InvalidInputError('page: not a cursor returned by this list');
}
