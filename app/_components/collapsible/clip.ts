/** Past either limit a text is shown collapsed. */
export const COLLAPSE_LINES = 40;
export const COLLAPSE_CHARS = 4_000;
/** What a collapsed text shows: enough to fill its bounded box, so a huge text costs little to render. */
const PREVIEW_LINES = 24;
const PREVIEW_CHARS = 2_400;

export type Clipped = { text: string; clipped: false } | { text: string; clipped: true; lines: number; chars: number };

/** All lines, and those with something on them (blank lines between paragraphs add little height). */
function countLines(text: string): { all: number; filled: number } {
  let all = 0;
  let filled = 0;
  for (let start = 0; start <= text.length; ) {
    const end = text.indexOf('\n', start);
    const stop = end === -1 ? text.length : end;
    all++;
    if (text.slice(start, stop).trim() !== '') filled++;
    start = stop + 1;
  }
  return { all, filled };
}

/** A long text's head, cut at a line end where one is near (a cut mid-word reads worse). */
export function clip(text: string): Clipped {
  if (text.length <= COLLAPSE_CHARS && countLines(text).filled <= COLLAPSE_LINES) return { text, clipped: false };
  const lines = countLines(text).all;
  let end = 0;
  let lineful = true;
  for (let i = 0; i < PREVIEW_LINES; i++) {
    const next = text.indexOf('\n', end);
    if (next === -1 || next > PREVIEW_CHARS) {
      lineful = false;
      break;
    }
    end = next + 1;
  }
  // Stopped by a long line rather than the line count: a cut far above the character limit would
  // show little, so cut at the limit itself.
  if (!lineful && end < PREVIEW_CHARS / 2) end = PREVIEW_CHARS;
  return { text: text.slice(0, end).trimEnd(), clipped: true, lines, chars: text.length };
}
