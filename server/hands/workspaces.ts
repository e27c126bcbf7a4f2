import 'server-only';
import fs from 'node:fs/promises';
import path from 'node:path';
import { errorFields, logger } from '~/server/log';

const log = logger('hands.workspaces');

/**
 * A local hand's folder holds its workspace one level down (`<root>/<hand>-XXXXXX/workspace`): the
 * sandbox runtime's masks go on the folder, out of the agent's listing (SandboxPolicy.protectRoot).
 * Hands made before keep their files in the folder itself.
 */
export const WORKSPACE_SUBDIR = 'workspace';

/**
 * The hand folder around a workspace, or null for a workspace that is its own folder. Only a folder
 * directly in `root` (the workspaces folder, as given or resolved) counts: what is removed with a
 * hand is never a folder of anyone else's.
 */
export async function handFolderOf(workspace: string, root: string): Promise<string | null> {
  if (path.basename(workspace) !== WORKSPACE_SUBDIR) return null;
  const folder = path.dirname(path.resolve(workspace));
  const roots = [path.resolve(root), await fs.realpath(root).catch(() => path.resolve(root))];
  return roots.includes(path.dirname(folder)) ? folder : null;
}

/**
 * Which folder a session's local hand keeps its files in: `<root>/<session>/<hand>` is a link to
 * the folder the provisioner made (`<root>/<hand>-XXXXXX`; a pooled hand's was made before any
 * session had it). The links are what let a suspended hand resume on its files after a restart
 * and a deleted session take its hands' workspaces with it, without a path in the log; a
 * transfer moves only the link.
 */
export class Workspaces {
  constructor(readonly root: string) {}

  private pathFor(sessionId: string, handId: string): string {
    return path.join(this.sessionDir(sessionId), safe(handId));
  }

  /** Records the folder a session's hand works in, under the session's name for it. */
  async adopt(sessionId: string, handId: string, folder: string): Promise<void> {
    const at = this.pathFor(sessionId, handId);
    await fs.mkdir(path.dirname(at), { recursive: true });
    await fs.rm(at, { recursive: true, force: true });
    await fs.symlink(folder, at);
  }

  /** The folder of a session's hand on this machine, or null when there is none. */
  async find(sessionId: string, handId: string): Promise<string | null> {
    try {
      const real = await fs.realpath(this.pathFor(sessionId, handId));
      return (await fs.stat(real)).isDirectory() ? real : null;
    } catch {
      return null;
    }
  }

  /** Removes a hand's files (and its link, for a pooled hand's folder). */
  async remove(sessionId: string, handId: string): Promise<void> {
    const at = this.pathFor(sessionId, handId);
    const real = await this.find(sessionId, handId);
    const folder = real ? ((await handFolderOf(real, this.root)) ?? real) : null;
    await Promise.all([folder ? fs.rm(folder, { recursive: true, force: true }) : null, fs.rm(at, { recursive: true, force: true })]).catch((e: unknown) =>
      log.warn('could not remove a workspace', { session: sessionId, hand: handId, ...errorFields(e) }),
    );
  }

  /** Gives a hand's folder to another session (a transfer): only the link moves. */
  async move(from: { sessionId: string; handId: string }, to: { sessionId: string; handId: string }): Promise<void> {
    const real = await this.find(from.sessionId, from.handId);
    if (!real) return;
    await this.adopt(to.sessionId, to.handId, real);
    await fs.rm(this.pathFor(from.sessionId, from.handId), { force: true });
  }

  /** Removes the workspaces of every hand of a session. */
  async removeSession(sessionId: string): Promise<void> {
    const dir = this.sessionDir(sessionId);
    const names = await fs.readdir(dir).catch(() => [] as string[]);
    await Promise.all(names.map((n) => this.remove(sessionId, n)));
    await fs.rm(dir, { recursive: true, force: true });
  }

  private sessionDir(sessionId: string): string {
    return path.join(this.root, safe(sessionId));
  }
}

/** Session and hand ids are ours (`sesn_…`, `sandbox-3`); anything else must not become a path. */
function safe(name: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`not a workspace name: ${JSON.stringify(name)}`);
  return name;
}
