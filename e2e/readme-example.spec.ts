import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { expect, test } from '@playwright/test';
import { E2E_API_KEY } from '~/e2e/auth';
import { DEMO_URL } from '~/e2e/ports';

/**
 * A program's first minutes: the README's API example, run exactly as printed against a real
 * `next start` (the demo brain's server, so nothing is scripted), and an event stream that opens
 * at once on an idle session (the SDK's stream() resolves on the response headers).
 */
const DEMO = DEMO_URL;

/** The README's first TypeScript block under "The Managed Agents API". */
function readmeExample(): string {
  const readme = fs.readFileSync(path.join(process.cwd(), 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## The Managed Agents API'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error('README: no ts block under "The Managed Agents API"');
  return block[1];
}

test('the README API example runs as printed: it opens the stream, sends, prints the answer and ends at idle', async () => {
  test.setTimeout(90_000);
  // Beside the project, so '@anthropic-ai/sdk' resolves from its node_modules.
  const file = path.join(process.cwd(), 'test-results', 'readme-example.mts');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, readmeExample());
  const child = spawn(process.execPath, ['--import', 'tsx', file], { env: { ...process.env, PADDOCK_URL: DEMO, PADDOCK_API_KEY: E2E_API_KEY }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  expect(err).toBe('');
  expect(code).toBe(0);
  // The demo brain lists the workspace's files in its answer.
  expect(out.trim().length).toBeGreaterThan(0);
});

test('events.stream() resolves at once on an idle session, not at the first keep-alive ping', async () => {
  const client = new Anthropic({ apiKey: E2E_API_KEY, baseURL: DEMO, maxRetries: 0 });
  const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const stream = await client.beta.sessions.events.stream(session.id);
    times.push(performance.now() - t0);
    stream.controller.abort();
  }
  times.sort((a, b) => a - b);
  console.log(`[stream-open] ms p50 ${times[2]!.toFixed(1)} max ${times[4]!.toFixed(1)}`);
  // The keep-alive ping comes every 15 s; the goal (≤ 100 ms) is measured in the bench, this catches the wait.
  expect(times[2]).toBeLessThan(1_000);
});
