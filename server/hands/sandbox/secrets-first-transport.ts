import 'server-only';
import type { ChildProcess } from 'node:child_process';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type HandSecret, secretsLine } from '~/server/hands/sandbox/hand-secret';

/**
 * The MCP stdio transport to a sandbox launcher that is handed its hand's secrets first: one line
 * on the launcher's stdin, before the MCP session starts. So a value is never in an environment
 * (`/proc/<pid>/environ`), an argv or a file; the launcher keeps it in its proxy's memory.
 */
export class SecretsFirstTransport extends StdioClientTransport {
  #line: string | null;

  constructor(params: StdioServerParameters, secrets: readonly HandSecret[]) {
    super(params);
    this.#line = secretsLine(secrets);
  }

  override async start(): Promise<void> {
    await super.start();
    // The SDK keeps its child private; its stdin is where the MCP messages go next, so ours goes first.
    const stdin = (this as unknown as { _process?: ChildProcess })._process?.stdin;
    if (!stdin || this.#line === null) throw new Error('the sandbox launcher has no stdin to hand its secrets to');
    stdin.write(this.#line);
    this.#line = null;
  }
}
