import { EventEmitter } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { serveNativeHand } from '~/server/hands/sandbox/native-hand';

/**
 * The launcher's side of a native hand against a scripted executor (its wire, no sandbox): what
 * the server sees when the executor dies under a running call must be the hand gone, not an answer.
 */
const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

/** A frame as the executor writes it: length, request id, op, body. */
function frame(id: number, op: string, body: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUInt32LE(5 + body.length, 0);
  head.writeUInt32LE(id, 4);
  head[8] = op.charCodeAt(0);
  return Buffer.concat([head, body]);
}

const ok = (body: Buffer = Buffer.alloc(0)) => Buffer.concat([Buffer.alloc(4), body]);

/** A fake executor process: says hello, answers path requests, and calls `onSpawn` when asked to run bash. */
function fakeExecutor(onSpawn: (out: PassThrough) => void): ChildProcess {
  const child = new EventEmitter() as ChildProcess & EventEmitter;
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  Object.assign(child, { stdin, stdout, stderr: new PassThrough(), exitCode: null, signalCode: null, kill: () => true });
  const hello = Buffer.alloc(4);
  hello.writeUInt32LE(4242, 0);
  stdout.write(frame(0, 'h', hello));
  let buf = Buffer.alloc(0);
  stdin.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32LE(0)) {
      const len = buf.readUInt32LE(0);
      const id = buf.readUInt32LE(4);
      const op = String.fromCharCode(buf[8]!);
      const body = buf.subarray(9, 4 + len);
      buf = buf.subarray(4 + len);
      if (op === 'P') stdout.write(frame(id, 'r', ok(Buffer.from(body.subarray(0, body.length - 1)))));
      else if (op === 'S' || op === 'L') stdout.write(frame(id, 'r', ok(Buffer.concat([Buffer.from('d'), Buffer.alloc(8)]))));
      else if (op === 'X') {
        stdout.write(frame(id, 'r', ok()));
        onSpawn(stdout);
      } else stdout.write(frame(id, 'r', ok()));
    }
  });
  return child;
}

/** A connected pair of sockets over a unix socket: the launcher's end and the server's. */
async function socketPair(): Promise<[net.Socket, net.Socket]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-native-wire-'));
  const file = path.join(dir, 's');
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(file, r));
  const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
  const client = net.connect(file);
  const launcherEnd = await accepted;
  cleanup.push(() => {
    client.destroy();
    launcherEnd.destroy();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return [launcherEnd, client];
}

describe('a native hand on its wire', () => {
  it('ends the connection, answering nothing, when its executor dies under a running command', async () => {
    const [launcherEnd, serverEnd] = await socketPair();
    // The executor dies once the command is running: its output ends, the process not yet reaped.
    const child = fakeExecutor((out) => setTimeout(() => out.end(), 50));
    await serveNativeHand(launcherEnd, child, { root: '/workspace', memoryMb: 0, cpuSeconds: 0 });

    let received = '';
    serverEnd.on('data', (d: Buffer) => (received += d.toString('utf8')));
    const closed = new Promise<void>((r) => serverEnd.once('close', () => r()));
    serverEnd.write(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'bash', arguments: { command: 'sleep 30' } } })}\n`);
    await closed;

    expect(received.startsWith('ok\n')).toBe(true);
    // No reply to call 7: a reply would be the executor's error as a tool result, and the hand kept.
    expect(received.slice(3)).not.toContain('"id":7');
  });

  it('answers a command that ends while the executor lives', async () => {
    const [launcherEnd, serverEnd] = await socketPair();
    const child = fakeExecutor((out) => {
      // Request ids count from 1; the realpath was 1, so the spawn is 2: its output, then its exit.
      out.write(frame(2, 'o', Buffer.from('hi\n')));
      out.write(frame(2, 'x', Buffer.alloc(4)));
    });
    await serveNativeHand(launcherEnd, child, { root: '/workspace', memoryMb: 0, cpuSeconds: 0 });

    let received = '';
    const answered = new Promise<void>((r) =>
      serverEnd.on('data', (d: Buffer) => {
        received += d.toString('utf8');
        if (received.includes('"id":8')) r();
      }),
    );
    serverEnd.write(`${JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'bash', arguments: { command: 'echo hi' } } })}\n`);
    await answered;
    expect(received).toContain('hi');
    expect(serverEnd.destroyed).toBe(false);
  });
});
