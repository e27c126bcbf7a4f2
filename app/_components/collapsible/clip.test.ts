import { describe, expect, it } from 'vitest';
import { COLLAPSE_CHARS, COLLAPSE_LINES, clip } from '~/app/_components/collapsible/clip';

const lines = (n: number, width = 10) => Array.from({ length: n }, (_, i) => `${i}`.padEnd(width, 'x')).join('\n');

describe('clip', () => {
  it('leaves a text within both limits whole', () => {
    const text = lines(COLLAPSE_LINES);
    expect(clip(text)).toEqual({ text, clipped: false });
  });

  it('collapses a text with too many lines to its first lines, cut at a line end', () => {
    const text = lines(COLLAPSE_LINES + 1);
    const c = clip(text);
    expect(c).toMatchObject({ clipped: true, lines: COLLAPSE_LINES + 1, chars: text.length });
    expect(text.startsWith(c.text)).toBe(true);
    expect(c.text.split('\n').length).toBeLessThan(COLLAPSE_LINES);
    expect(c.text.endsWith('x')).toBe(true);
  });

  it('does not count the blank lines between paragraphs towards the line limit', () => {
    const text = lines(COLLAPSE_LINES).split('\n').join('\n\n');
    expect(clip(text).clipped).toBe(false);
    expect(clip(`${text}\n\nmore`)).toMatchObject({ clipped: true, lines: COLLAPSE_LINES * 2 + 1 });
  });

  it('collapses one huge line (200 KB) to a short head', () => {
    const text = 'a'.repeat(200_000);
    const c = clip(text);
    expect(c.clipped).toBe(true);
    expect(c.text.length).toBeLessThanOrEqual(COLLAPSE_CHARS);
    expect(c.text.length).toBeGreaterThan(0);
  });

  it('collapses a few very long lines by their characters, not at the first line end', () => {
    const text = `${'b'.repeat(3_000)}\n${'c'.repeat(3_000)}`;
    const c = clip(text);
    expect(c.clipped).toBe(true);
    expect(c.text.length).toBeGreaterThan(1_000);
    expect(c.text.length).toBeLessThan(COLLAPSE_CHARS);
  });
});
