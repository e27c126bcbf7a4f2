'use client';
import { useEffect, useRef } from 'react';
import type { ITheme, Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import '~/app/_components/ide/ide.css';

/** ANSI colours tuned to the app palette (globals.css), readable on the near-black background. */
const THEME: ITheme = {
  background: '#05070a',
  foreground: '#d6dbe4',
  cursor: '#05070a', // read-only: no visible cursor
  cursorAccent: '#05070a',
  selectionBackground: '#3a4358',
  black: '#1e222b',
  red: '#e5534b',
  green: '#4fb477',
  yellow: '#e0b341',
  blue: '#6c9ef8',
  magenta: '#c586e8',
  cyan: '#4fc1c9',
  white: '#c9ced9',
  brightBlack: '#5c6475',
  brightRed: '#ff7b72',
  brightGreen: '#7ee2a0',
  brightYellow: '#f5d274',
  brightBlue: '#9cc0ff',
  brightMagenta: '#dcaaf5',
  brightCyan: '#8be3e8',
  brightWhite: '#ffffff',
};

// eslint-disable-next-line no-control-regex -- matching terminal escape sequences is the point
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/** The transcript without colour codes (and with bare CRs dropped), for tests and screen readers. */
export function plainText(text: string): string {
  return text.replace(ANSI, '').replace(/\r(?!\n)/g, '').replace(/\r\n/g, '\n');
}

interface Live {
  term: Terminal;
  /** How many chunks are on screen, and the first and last of them: to tell an append from a new array. */
  written: number;
  first: string | undefined;
  last: string | undefined;
}

/** Writes what is new in `chunks`; starts over when the array is not an extension of what was written. */
function sync(live: Live, chunks: readonly string[]) {
  const appended = chunks.length >= live.written && (live.written === 0 || (chunks[0] === live.first && chunks[live.written - 1] === live.last));
  if (!appended) {
    live.term.reset();
    live.written = 0;
  }
  for (let i = live.written; i < chunks.length; i++) live.term.write(chunks[i]!);
  live.written = chunks.length;
  live.first = chunks[0];
  live.last = chunks[chunks.length - 1];
}

/**
 * A read-only terminal showing a command's output. The caller passes every chunk so far and
 * appends to the array as output streams in; only the new chunks are written.
 */
export function TerminalView({ chunks }: { chunks: readonly string[] }) {
  const host = useRef<HTMLDivElement>(null);
  const live = useRef<Live | null>(null);
  const latest = useRef(chunks);

  useEffect(() => {
    latest.current = chunks;
    if (live.current) sync(live.current, chunks);
  }, [chunks]);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    let cancelled = false;
    let cleanup = () => {};
    // Loaded on mount, in the browser only: xterm is large and has nothing to render on the server.
    void Promise.all([import('@xterm/xterm'), import('@xterm/addon-fit')]).then(([{ Terminal }, { FitAddon }]) => {
      if (cancelled) return;
      const term = new Terminal({
        convertEol: true, // output uses \n; the terminal needs \r\n to return to column 0
        disableStdin: true,
        cursorBlink: false,
        cursorInactiveStyle: 'none',
        scrollback: 5000,
        fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
        fontSize: 12,
        lineHeight: 1.25,
        theme: THEME,
      });
      const fit = new FitAddon();
      term.loadAddon(fit);
      term.open(el);
      const refit = () => {
        // Hidden or zero-sized containers have no dimensions to fit to.
        if (el.clientWidth > 0 && el.clientHeight > 0) fit.fit();
      };
      refit();
      let frame = 0;
      const observer = new ResizeObserver(() => {
        cancelAnimationFrame(frame);
        frame = requestAnimationFrame(refit);
      });
      observer.observe(el);
      const state: Live = { term, written: 0, first: undefined, last: undefined };
      live.current = state;
      sync(state, latest.current);
      cleanup = () => {
        cancelAnimationFrame(frame);
        observer.disconnect();
        live.current = null;
        term.dispose();
      };
    });
    return () => {
      // StrictMode mounts twice in development: the first terminal must go before the second opens.
      cancelled = true;
      cleanup();
    };
  }, []);

  return (
    <div className="term" data-testid="terminal">
      <div className="term-host" ref={host} />
      <pre className="ide-sr-only" data-testid="terminal-text">
        {plainText(chunks.join(''))}
      </pre>
    </div>
  );
}
