import { ToolError } from '~/lib/hand';

/**
 * The text rules of the `read` and `edit` tools, the same on every hand (paddock-hand on a disk,
 * the browser's engines, the memory hand, the server-filesystem adapter); each hand only brings
 * its own file access.
 */

/** `read`'s `view_range`: [start, end], 1-based and inclusive; end -1 = to the end of the file. */
export type ViewRange = readonly number[];

/** Rejects a `view_range` that names no lines (before any file is touched). */
export function checkViewRange(range: ViewRange | undefined): void {
  if (range === undefined) return;
  const [start, end] = range;
  if (range.length !== 2 || start === undefined || end === undefined) throw new ToolError('read: view_range must be [start, end]');
  if (!Number.isInteger(start) || start < 1) throw new ToolError(`read: view_range start ${start} must be a line number (1 or more)`);
  if (!Number.isInteger(end) || (end < 1 && end !== -1)) throw new ToolError(`read: view_range end ${end} must be a line number (1 or more) or -1 for the end of the file`);
  if (end !== -1 && start > end) throw new ToolError(`read: view_range start ${start} is after its end ${end}`);
}

/** The lines of `range` in a text; the whole text without a range. */
export function lineRange(text: string, range: ViewRange | undefined): string {
  if (range === undefined) return text;
  checkViewRange(range);
  const [start, end] = range as [number, number];
  const lines = text.split('\n');
  return lines.slice(start - 1, end === -1 ? lines.length : end).join('\n');
}

/** How many times `oldString` occurs in the file at `p`: at least once, and exactly once unless `all`. */
export function countOccurrences(text: string, oldString: string, p: string, all = false): number {
  if (oldString === '') throw new ToolError('edit: old_string is empty');
  let count = 0;
  for (let at = text.indexOf(oldString); at >= 0; at = text.indexOf(oldString, at + oldString.length)) count++;
  if (count === 0) throw new ToolError(`edit: old_string not found in ${p}`);
  if (count > 1 && !all) throw new ToolError(`edit: old_string occurs ${count} times in ${p}; include more context to make it unique, or set replace_all`);
  return count;
}

/**
 * `edit`: replaces `oldString`, which must occur exactly once in the file at `p`, or every
 * occurrence with `all`. Returns the new text and how many were replaced.
 */
export function replaceText(text: string, oldString: string, newString: string, p: string, all = false): { text: string; count: number } {
  const count = countOccurrences(text, oldString, p, all);
  // split/join, not String.replace: `$&` and friends in new_string must stay literal.
  return { text: text.split(oldString).join(newString), count };
}

/** The answer of a successful edit: which file, and how many places when more than one. */
export function editedText(rel: string, count: number): string {
  return count === 1 ? `edited ${rel}` : `edited ${rel} (${count} replacements)`;
}
