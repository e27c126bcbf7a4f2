'use client';
import { useEffect, useRef, useState } from 'react';
import '~/app/_components/copy-button/copy-button.css';

/** How long "Copied" shows before the button reads "Copy" again. */
const FEEDBACK_MS = 1_500;

/**
 * Copies a text to the clipboard. `text` may be a function, read at the click, for text that is
 * only in the DOM (a highlighted code block). Outside a secure context there is no clipboard:
 * the button then says so instead of pretending.
 */
export function CopyButton({ text, label = 'Copy', testId = 'copy' }: { text: string | (() => string); label?: string; testId?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef(0);
  useEffect(() => () => window.clearTimeout(timer.current), []);

  const copy = async () => {
    window.clearTimeout(timer.current);
    try {
      await navigator.clipboard.writeText(typeof text === 'function' ? text() : text);
      setState('copied');
    } catch {
      setState('failed');
    }
    timer.current = window.setTimeout(() => setState('idle'), FEEDBACK_MS);
  };

  return (
    <button type="button" className="copy-button" data-testid={testId} data-state={state} aria-live="polite" onClick={() => void copy()}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : label}
    </button>
  );
}
