/**
 * The sandbox runtime's masks (an empty read-only /dev/null on `.bashrc`, `.gitconfig`, `.mcp.json`,
 * `.vscode`, … at the top of the folder the launcher stands in) are made in the launcher's own
 * runtime folder, not the workspace: the agent's `ls -la` shows its own files only, and what it
 * writes under those names is a plain file of its workspace that reaches nothing of the host's,
 * the server's or another hand's (real bubblewrap, the production provisioner).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_MASKED_DIRS, SANDBOX_MASKED_FILES } from '~/lib/sandbox-masks';
import type { SuspendableHand } from '~/server/hands/provisioner';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';

const tag = randomBytes(4).toString('hex');
const MARK = `PLANTED-${tag}`;

let root: string;
let provisioner: ReturnType<typeof createLocalHandProvisioner>;
let a: SuspendableHand;
let b: SuspendableHand;
let calls = 0;

const run = (hand: SuspendableHand, command: string) =>
  hand.execute('bash', { command, timeout_ms: 60_000 }, { callId: `call-${++calls}`, signal: new AbortController().signal });

/** The host files a planted dotfile could aim at: the server's home and project, root's home. */
const hostTargets = () =>
  [...new Set([os.homedir(), process.cwd(), '/root'])].flatMap((dir) => SANDBOX_MASKED_FILES.map((f) => path.join(dir, f)));
const snapshot = () => new Map(hostTargets().map((p) => [p, fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : null]));

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-masks-'));
  provisioner = createLocalHandProvisioner({ dataDir: path.join(root, 'data'), workspacesDir: path.join(root, 'ws') });
  const signal = new AbortController().signal;
  [a, b] = (await Promise.all([
    provisioner.provision('masks-a', { kind: 'sandbox' }, { signal }),
    provisioner.provision('masks-b', { kind: 'sandbox' }, { signal }),
  ])) as [SuspendableHand, SuspendableHand];
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

describe("the sandbox runtime's masks", () => {
  it("do not appear in ls -la of a hand's workspace, inside or on the host", async () => {
    await run(a, 'echo mine > notes.txt');
    const listing = await run(a, 'ls -la');
    expect(listing).toContain('notes.txt');
    // No character device (a /dev/null placeholder) and none of the masked names.
    expect(listing.split('\n').filter((l) => l.startsWith('c'))).toEqual([]);
    for (const name of [...SANDBOX_MASKED_FILES, ...SANDBOX_MASKED_DIRS]) expect(listing).not.toMatch(new RegExp(` ${name.replace('.', '\\.')}$`, 'm'));
    expect(fs.readdirSync(a.workspace)).toEqual(['notes.txt']);
  }, 60_000);

  it('let the agent write those names as plain files of its own that reach nothing sensitive', async () => {
    const before = snapshot();
    const out = await run(
      a,
      [
        // Plain files and folders under every masked name.
        ...SANDBOX_MASKED_FILES.map((f) => `echo 'echo ${MARK}' > ${f}`),
        ...SANDBOX_MASKED_DIRS.map((d) => `mkdir -p ${d} && echo ${MARK} > ${d}/settings.json`),
        'git init -q . 2>/dev/null; mkdir -p .git/hooks && echo "echo ${MARK}" > .git/hooks/pre-commit',
        // Links aimed at the host's own dotfiles, written through.
        ...hostTargets().map((p, i) => `ln -sf ${p} link-${i} && { echo ${MARK} >> link-${i}; } 2>/dev/null`),
        'echo done',
      ].join('; '),
    );
    expect(out).toContain('done');
    // Nothing of the host changed: the links led into the sandbox's empty hidden folders.
    expect(snapshot()).toEqual(before);
    // What it wrote is its own, in its workspace, and no other hand sees it.
    for (const f of SANDBOX_MASKED_FILES) expect(fs.lstatSync(path.join(a.workspace, f)).isFile()).toBe(true);
    expect(await run(b, `ls -a; grep -rls ${MARK} . "$HOME" "$TMPDIR" /tmp /root /home; echo end`)).not.toContain(MARK);
    // Its shells do not run a planted .bashrc or .profile: their HOME is elsewhere.
    expect(await run(a, 'bash -ic true 2>&1; bash -lc true 2>&1; echo ok')).not.toContain(MARK);
  }, 120_000);

  it("keep a repository's hooks in the workspace read-only for the next start of its hand", async () => {
    const c = (await provisioner.provision('masks-c', { kind: 'sandbox' }, { signal: new AbortController().signal })) as SuspendableHand;
    await run(c, 'git init -q repo-top 2>&1; git init -q . && echo INIT');
    await c.suspend();
    const again = (await provisioner.provision('masks-c', { kind: 'sandbox' }, { signal: new AbortController().signal, workspace: c.workspace })) as SuspendableHand;
    try {
      const out = await run(again, `echo 'touch /tmp/pwned' > .git/hooks/post-commit && echo HOOK_WRITTEN; echo "DEVICES=$(ls -la | grep -c '^c')"`);
      expect(out).not.toContain('HOOK_WRITTEN');
      expect(out, 'no placeholder in a resumed workspace either').toContain('DEVICES=0');
      expect(fs.existsSync(path.join(c.workspace, '.git', 'hooks', 'post-commit'))).toBe(false);
    } finally {
      await again.close();
    }
  }, 120_000);
});
