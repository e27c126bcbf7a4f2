'use client';
import { type ReactNode, useMemo, useState } from 'react';
import { clip } from '~/app/_components/collapsible/clip';
import '~/app/_components/collapsible/collapsible.css';

function size(chars: number): string {
  return chars < 10_000 ? `${chars.toLocaleString('en')} characters` : `${Math.round(chars / 1024).toLocaleString('en')} KB`;
}

/**
 * A text that may be huge (a 200 KB answer, a build log): past the limits in `clip.ts` only its
 * head is rendered, in a box of bounded height, until the reader asks for all of it.
 * `render(text, clipped)` draws the text; a clipped head may end mid-markdown.
 */
export function Collapsible({ text, render, onExpand }: { text: string; render: (text: string, clipped: boolean) => ReactNode; onExpand?: () => void }) {
  const c = useMemo(() => clip(text), [text]);
  const [open, setOpen] = useState(false);
  if (!c.clipped) return render(text, false);
  return (
    <div className="collapsible" data-testid="collapsible" data-open={open}>
      <div className={open ? 'collapsible-body' : 'collapsible-body collapsed'} data-testid="collapsible-body">
        {open ? render(text, false) : render(c.text, true)}
      </div>
      <button
        type="button"
        className="show-all"
        data-testid="show-all"
        aria-expanded={open}
        onClick={() => {
          if (!open) onExpand?.();
          setOpen(!open);
        }}
      >
        {open ? 'Show less' : `Show all (${c.lines.toLocaleString('en')} lines, ${size(c.chars)})`}
      </button>
    </div>
  );
}
