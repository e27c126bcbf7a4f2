'use client';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { startBrowserEngine } from '~/lib/browser/engine/start-engine';
import type { BrowserEngine } from '~/lib/browser/engine/types';

declare global {
  interface Window {
    /** The running engine, for Playwright. */
    __paddockEngine?: BrowserEngine;
    /** Page time (ms) at which the engine became ready. */
    __paddockEngineReadyAt?: number;
  }
}

interface Props {
  prefer: 'offline' | 'auto';
  sessionId: string;
  bootTimeoutMs?: number;
  ignoreIsolation: boolean;
  nodeTimeLimitMs?: number;
}

/** Dev page UI: start an engine, run bash commands against it, show the result. */
export function EnginePlayground({ prefer, sessionId, bootTimeoutMs, ignoreIsolation, nodeTimeLimitMs }: Props) {
  const [engine, setEngine] = useState<BrowserEngine | null>(null);
  const [status, setStatus] = useState('starting…');
  const [error, setError] = useState<string | null>(null);
  const [command, setCommand] = useState('echo hi | tr a-z A-Z');
  const [output, setOutput] = useState('');
  const [running, setRunning] = useState(false);
  const [elapsed, setElapsed] = useState<number | null>(null);
  const [frames, setFrames] = useState(0);
  const started = useRef(false);
  const live = useRef<BrowserEngine | null>(null);

  useEffect(() => {
    // StrictMode runs effects twice in dev: the second run must not start a second engine.
    if (started.current) return;
    started.current = true;
    startBrowserEngine({
      sessionId,
      prefer: prefer === 'offline' ? 'offline' : undefined,
      bootTimeoutMs,
      ignoreIsolation,
      nodeTimeLimitMs,
      onStatus: setStatus,
    }).then(
      (e) => {
        live.current = e;
        window.__paddockEngine = e;
        window.__paddockEngineReadyAt = performance.now();
        setEngine(e);
        setStatus('ready');
      },
      (e: unknown) => {
        setError((e as Error).message);
        setStatus('failed');
      },
    );
  }, [prefer, sessionId, bootTimeoutMs, ignoreIsolation, nodeTimeLimitMs]);

  useEffect(() => () => live.current?.dispose(), []);

  // A frame counter: it stops advancing if the page's main thread is blocked.
  useEffect(() => {
    let id = 0;
    const tick = () => {
      setFrames((f) => f + 1);
      id = requestAnimationFrame(tick);
    };
    id = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(id);
  }, []);

  const run = async (e: FormEvent) => {
    e.preventDefault();
    if (!engine || running) return;
    setRunning(true);
    setOutput('');
    const t0 = performance.now();
    try {
      const text = await engine.execute('bash', { command }, { signal: new AbortController().signal, onOutput: () => undefined });
      setOutput(text);
    } catch (err) {
      setOutput(`error: ${(err as Error).message}`);
    } finally {
      setElapsed(Math.round(performance.now() - t0));
      setRunning(false);
    }
  };

  return (
    <section>
      <h1>Browser engine</h1>
      <p>
        status: <span data-testid="engine-status">{status}</span> · engine: <b data-testid="engine-kind">{engine?.kind ?? '—'}</b> · frames:{' '}
        <span data-testid="engine-frames">{frames}</span>
      </p>
      <p data-testid="engine-reason">{engine?.reason ?? error ?? ''}</p>
      <form onSubmit={(e) => void run(e)}>
        <input data-testid="engine-command" value={command} onChange={(e) => setCommand(e.target.value)} style={{ width: '70%' }} />{' '}
        <button data-testid="engine-run" type="submit" disabled={!engine || running}>
          {running ? 'running…' : 'run'}
        </button>
        {elapsed !== null && <span data-testid="engine-elapsed"> {elapsed} ms</span>}
      </form>
      <pre className="terminal" data-testid="engine-output" data-running={running ? 'true' : 'false'}>
        {output}
      </pre>
    </section>
  );
}
