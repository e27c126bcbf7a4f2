import 'server-only';
import { PassThrough } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { HostedHand } from '~/server/hands/sandbox/hand-host';

/** After our end closes, the hand gets this long to exit on its own before it is killed (as the SDK's stdio client). */
const CLOSE_GRACE_MS = 2_000;

/**
 * The MCP stdio wire to a hand on a shared launcher: the same newline-delimited JSON-RPC as
 * `StdioClientTransport`, over the hand's socket instead of a child's pipes. `open` starts the
 * hand when the client connects.
 */
export class HostedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private hand: HostedHand | undefined;
  private readonly buffer = new ReadBuffer();
  private closed = false;
  /** The hand's stderr (stdio-env.ts keeps its tail for error messages), from its start on. */
  readonly stderr = new PassThrough();

  constructor(private readonly open: () => Promise<HostedHand>) {}

  async start(): Promise<void> {
    const hand = await this.open();
    this.hand = hand;
    hand.stderr.pipe(this.stderr);
    hand.socket.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (;;) {
        try {
          const message = this.buffer.readMessage();
          if (message === null) break;
          this.onmessage?.(message);
        } catch (e) {
          this.onerror?.(e as Error);
        }
      }
    });
    hand.socket.on('error', (e) => this.onerror?.(e));
    hand.socket.once('close', () => this.ended());
    hand.socket.resume();
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = this.hand?.socket;
      if (!socket || socket.destroyed) return reject(new Error('the hand is not connected'));
      socket.write(serializeMessage(message), (e) => (e ? reject(e) : resolve()));
    });
  }

  async close(): Promise<void> {
    const hand = this.hand;
    if (!hand) return this.ended();
    // Our end closing is how a stdio MCP client says goodbye; a hand that does not go is killed.
    // Gone when its launcher says so or its end of the socket closes (it exited, its sandbox with it).
    const exited = Promise.race([hand.exited, new Promise((r) => (hand.socket.closed ? r(null) : hand.socket.once('close', r)))]).then(() => true);
    hand.socket.end();
    const timer = (ms: number) => new Promise<boolean>((r) => setTimeout(() => r(false), ms));
    if (!(await Promise.race([exited, timer(CLOSE_GRACE_MS)]))) {
      hand.kill();
      await Promise.race([exited, timer(5_000)]);
    }
    hand.socket.destroy();
    this.ended();
  }
}
