import { ToolError } from '~/lib/hand';

/**
 * The text rules of the `read` and `edit` tools, the same on every hand (paddock-hand on a disk,
 * the browser's offline engine); each hand only brings its own file access.
 */

/** Rejects a `read` range whose start is after its end (before any file is touched). */
export function checkLineRange(start: number | undefined, end: number | undefined): void {
  if (start !== undefined && end !== undefined && start > end) throw new ToolError(`read: start_line ${start} is after end_line ${end}`);
}

/** Lines `start`..`end` (1-based, inclusive) of a text; the whole text without a range. */
export function lineRange(text: string, start: number | undefined, end: number | undefined): string {
  if (start === undefined && end === undefined) return text;
  const lines = text.split('\n');
  return lines.slice((start ?? 1) - 1, end ?? lines.length).join('\n');
}

/** Where `oldText` is in the file at `p`: `edit` needs exactly one occurrence. */
export function findOnce(text: string, oldText: string, p: string): number {
  if (oldText === '') throw new ToolError('edit: old_text is empty');
  const first = text.indexOf(oldText);
  if (first < 0) throw new ToolError(`edit: old_text not found in ${p}`);
  if (text.indexOf(oldText, first + 1) >= 0) throw new ToolError(`edit: old_text occurs more than once in ${p}; include more context`);
  return first;
}

/** `edit`: replaces `oldText`, which must occur exactly once in the file at `p`. */
export function replaceOnce(text: string, oldText: string, newText: string, p: string): string {
  const at = findOnce(text, oldText, p);
  return text.slice(0, at) + newText + text.slice(at + oldText.length);
}
