import { InMemoryFs } from 'just-bash/browser';
import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import { describe, expect, it } from 'vitest';
import { runNode, type NodeRunResult } from '~/lib/browser/engine/offline/node/node-run';

// The module the browser loads (wasm embedded), each test with its own so a grown heap is not shared.
async function quickjs(): Promise<QuickJSWASMModule> {
  const variant = await import('@jitl/quickjs-singlefile-browser-release-sync');
  return newQuickJSWASMModuleFromVariant(variant.default);
}

const MiB = 1024 * 1024;

async function evalNode(qjs: QuickJSWASMModule, code: string, o: { memoryLimitBytes: number; timeLimitMs: number }): Promise<NodeRunResult> {
  return runNode(qjs, { kind: 'eval', code, print: false, filename: '[eval]', args: [] }, {
    fs: new InMemoryFs(),
    cwd: '/',
    env: {},
    stdin: new Uint8Array(),
    ...o,
    exec: () => Promise.resolve({ stdout: '', stderr: 'no shell here', exitCode: 127 }),
  });
}

describe('the offline engine’s memory limit', () => {
  // QuickJS's own limit, in an Emscripten build, bounds each allocation but not their sum: these
  // scripts then ran until the time limit (or the 4 GiB wasm ceiling), holding gigabytes of the tab.
  it.each([
    ['arrays', 'const a = []; while (true) a.push(new Array(1e6).fill(1))'],
    ['strings of 1 MiB', "const a = []; let i = 0; while (true) a.push('x'.repeat(1 << 20) + i++)"],
    ['typed arrays', 'const a = []; while (true) a.push(new Uint8Array(1 << 20))'],
  ])('stops a script that keeps %s, before the time limit, and drops the grown module', async (_what, code) => {
    const r = await evalNode(await quickjs(), code, { memoryLimitBytes: 64 * MiB, timeLimitMs: 15_000 });
    expect(r.stderr).toContain('node: script stopped: out of memory (memory limit 64 MiB)');
    expect(r.stderr).not.toContain('time limit');
    expect(r.exitCode).toBe(134);
    expect(r.poisoned).toBe(true);
  });

  it('lets a script use memory under the limit', async () => {
    const r = await evalNode(await quickjs(), "const a = []; for (let i = 0; i < 16; i++) a.push('x'.repeat(1 << 20) + i); console.log(a.length)", {
      memoryLimitBytes: 64 * MiB,
      timeLimitMs: 15_000,
    });
    expect(r).toMatchObject({ stdout: '16\n', exitCode: 0, poisoned: false });
  });
});
