/**
 * The sandbox runtime (@anthropic-ai/sandbox-runtime) keeps a hand from planting a hook or a
 * config the user's own tools would later run on the host: before each sandboxed command it
 * mounts an empty read-only placeholder on each of these names in its cwd (where none exists),
 * and those placeholders stay in the folder. The launcher stands in the hand folder above the
 * workspace (SandboxPolicy.protectRoot), so a new workspace gets none; one made before still holds
 * them, and file listings leave them out.
 *
 * A copy of the runtime's `DANGEROUS_FILES` and of the top folders of `getDangerousDirectories()`
 * (`.claude/commands` is masked at `.claude`): importing them would pull the runtime into every
 * hand's bundle. `sandbox-masks.test.ts` fails when the runtime's lists change.
 */
export const SANDBOX_MASKED_FILES: readonly string[] = ['.gitconfig', '.gitmodules', '.bashrc', '.bash_profile', '.zshrc', '.zprofile', '.profile', '.ripgreprc', '.mcp.json'];
export const SANDBOX_MASKED_DIRS: readonly string[] = ['.vscode', '.idea', '.claude'];

/** Every masked top-level name: a cheap first check before a listing looks at an entry's size. */
export const SANDBOX_MASKED_NAMES: ReadonlySet<string> = new Set([...SANDBOX_MASKED_FILES, ...SANDBOX_MASKED_DIRS]);

/** What a listing knows of an entry: a directory's count of entries, a file's size. */
export type EntryShape = { kind: 'file'; size: number } | { kind: 'directory'; entries: number };

/**
 * Whether a workspace entry is one of the runtime's placeholders: one of the masked names, at the
 * workspace's top level, and empty (a 0-byte file, /dev/null included, or an empty folder). A
 * `.gitconfig` the agent wrote with content is its work and stays listed.
 */
export function isSandboxMask(rel: string, entry: EntryShape): boolean {
  if (rel.includes('/') || !SANDBOX_MASKED_NAMES.has(rel)) return false;
  return entry.kind === 'file' ? entry.size === 0 : entry.entries === 0;
}
