import 'server-only';
import { type ExecuteContext, type Hand, NEVER_LOST, type ToolSpec, ToolError } from '~/lib/hand';
import { BRAIN_TOOLS } from '~/lib/tools';
import { WorkspaceTools } from '~/lib/workspace-tools/file-tools';
import { MemoryToolFs } from '~/lib/workspace-tools/memory-tool-fs';
import type { Provisioner } from '~/server/hands/provisioner';

/**
 * An in-process hand over an in-memory file tree, with the file tools every hand shares. It has
 * no shell: it exists so a session can work (and tests can run) before any real hand is
 * provisioned. It holds no credentials and can reach nothing outside its own map.
 */
const ROOT = '/workspace';

export class MemoryHand implements Hand {
  readonly kind = 'memory' as const;
  readonly lost = NEVER_LOST;
  private readonly fs = new MemoryToolFs();
  private readonly files = new WorkspaceTools(this.fs, ROOT);

  constructor(readonly id: string) {}

  tools(): Promise<ToolSpec[]> {
    return Promise.resolve(BRAIN_TOOLS.filter((t) => t.name !== 'bash'));
  }

  execute(name: string, input: unknown, _ctx?: ExecuteContext): Promise<string> {
    if (name === 'bash') return Promise.reject(new ToolError(`bash: hand ${this.id} is an in-memory hand without a shell`));
    return this.files.run(name, input);
  }

  close(): Promise<void> {
    this.fs.clear();
    return Promise.resolve();
  }
}

/** In-process hands: for tests and for the demo brain when nothing else is configured. */
export function createMemoryProvisioner(): Provisioner {
  return {
    provision: (handId) => Promise.resolve(new MemoryHand(handId)),
  };
}
