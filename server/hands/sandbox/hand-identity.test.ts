/**
 * A sandbox hand never holds the host's root (issue 22, H1), proven with real sandboxed
 * paddock-hand processes from the production provisioner while the tests run as root, as in CI:
 * the red team's file-capability escalation, root-only files, the hand's own ids and capabilities,
 * and another hand's workspace. The host side runs as user nobody, or as the other hand's uid.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SuspendableHand } from '~/server/hands/provisioner';
import { bwrapShim, handIdentity } from '~/server/hands/sandbox/hand-identity';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';

const SECRET = `ROOT-ONLY-${randomBytes(8).toString('hex')}`;
const tag = randomBytes(4).toString('hex');
const rootOnly = [`/etc/paddock-h1-${tag}`, `/var/lib/paddock-h1-${tag}`];

let root: string;
let workspacesDir: string;
let a: SuspendableHand;
let b: SuspendableHand;
let calls = 0;

const run = async (hand: SuspendableHand, command: string) =>
  String(await hand.execute('bash', { command, timeout_ms: 60_000 }, { callId: `call-${++calls}`, signal: new AbortController().signal }));

/**
 * Runs a program on the host as another local user, as a login would (no group of root's, the
 * usual bounding set: emptying it would itself refuse to run a file with capabilities). Through a
 * shell: setpriv looks the program up before its capabilities are gone, and would cross folders
 * that user cannot.
 */
const asUser = (uid: number, argv: string[]) =>
  spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', '/bin/sh', '-c', 'exec "$@"', 'sh', ...argv], { encoding: 'utf8', timeout: 20_000 });
const NOBODY = 65534;

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('these tests are about a server running as root: run them as root (CI does)');
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-h1-'));
  workspacesDir = path.join(os.tmpdir(), `paddock-h1-ws-${tag}`);
  for (const f of rootOnly) fs.writeFileSync(f, SECRET, { mode: 0o600 });
  const provisioner = createLocalHandProvisioner({ dataDir: path.join(root, 'data'), workspacesDir });
  const signal = new AbortController().signal;
  [a, b] = (await Promise.all([
    provisioner.provision('h1-a', { kind: 'sandbox' }, { signal }),
    provisioner.provision('h1-b', { kind: 'sandbox' }, { signal }),
  ])) as [SuspendableHand, SuspendableHand];
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  for (const p of [...rootOnly, workspacesDir, root]) if (p) fs.rmSync(p, { recursive: true, force: true });
});

describe('a sandbox hand on a server running as root', () => {
  it('cannot make a local user root with a file capability (the red-team repro)', async () => {
    const out = await run(a, `cp /usr/bin/perl ./pl && setcap cap_setuid,cap_setgid+ep ./pl; echo "SETCAP=$?"; chmod 0755 "$PWD"; chmod 0755 ./pl`);
    const pl = path.join(a.workspace, 'pl');
    expect(fs.existsSync(pl)).toBe(true);
    // Refused inside (the hand holds no capability)…
    expect(out).toMatch(/SETCAP=[1-9]/);
    // …and whatever the hand wrote, user nobody on the host cannot even reach it, let alone run it to become root.
    const escalated = asUser(NOBODY, [pl, '-e', 'use POSIX; setgid(0); setuid(0); exec "id"']);
    expect(escalated.stdout).not.toMatch(/uid=0/);
    expect(escalated.stderr).toContain('Permission denied');
    expect(execFileSync('getcap', [pl], { encoding: 'utf8' }).trim()).toBe('');
  }, 60_000);

  it('cannot read a root-only 0600 file in /etc or /var', async () => {
    const out = await run(a, rootOnly.map((f) => `cat ${f} 2>&1; echo`).join('; '));
    expect(out).not.toContain(SECRET);
    expect(out).toContain('Permission denied');
  }, 60_000);

  it('is not root on the host and holds no capability', async () => {
    const out = await run(a, `id -u; grep -E '^Cap(Prm|Eff|Amb):' /proc/self/status; touch made-by-the-hand`);
    const uid = out.trim().split('\n')[0];
    const caps = out.split('\n').filter((l) => l.startsWith('Cap'));
    expect(Number(uid)).not.toBe(0);
    expect(caps).toHaveLength(3);
    for (const line of caps) expect(line).toMatch(/:\s*0+$/);
    // The host sees the hand's files as its own uid's, not root's.
    const st = fs.statSync(path.join(a.workspace, 'made-by-the-hand'));
    expect(st.uid).toBe(handIdentity(a.workspace).uid);
    expect(st.uid).not.toBe(0);
    expect(st.gid).not.toBe(0);
  }, 60_000);

  it("cannot get into another hand's workspace, even one its owner opened", async () => {
    await run(a, `echo ${SECRET} > open.txt; chmod 0755 "$PWD"; chmod 0644 open.txt`);
    const file = path.join(a.workspace, 'open.txt');
    expect(fs.readFileSync(file, 'utf8')).toContain(SECRET);
    // From inside hand B: the workspaces folder is hidden.
    expect(await run(b, `cat ${file} 2>&1; ls ${path.dirname(a.workspace)} 2>&1`)).not.toContain(SECRET);
    // On the host, as hand B's uid and as nobody: the workspaces folder is root's alone.
    for (const uid of [handIdentity(b.workspace).uid, NOBODY]) {
      const read = asUser(uid, ['cat', file]);
      expect(read.stdout).not.toContain(SECRET);
      expect(read.stderr).toContain('Permission denied');
    }
    expect(fs.statSync(workspacesDir).mode & 0o777).toBe(0o700);
  }, 60_000);

  it("shows its proxy's credentials in no command line it can read (/proc/1/cmdline was bubblewrap's, with all its options)", async () => {
    const out = await run(
      a,
      `t=\${HTTP_PROXY#*//}; t=\${t%%@*}; t=\${t#*:}; echo "TOKEN_LEN=\${#t}"
       for f in /proc/[0-9]*/cmdline; do c=$(tr '\\0' ' ' < "$f"); [[ $c == *"$t"* ]] && echo "LEAK $f"; done; echo SCANNED`,
    );
    expect(out).toMatch(/TOKEN_LEN=[1-9]\d*/);
    expect(out).toContain('SCANNED');
    expect(out).not.toContain('LEAK');
  }, 60_000);

  it('keeps its shells, node and ripgrep working as its own uid', async () => {
    const out = await run(a, `mkdir -p d && echo needle > d/f && rg -l needle d && node -e 'console.log(6*7)' && echo tmp > /tmp/x && cat /tmp/x && echo "HOME=$HOME" && touch "$HOME/h" && echo HOME_WRITABLE`);
    expect(out).toContain('d/f');
    expect(out).toContain('42');
    expect(out).toContain('tmp');
    expect(out).toContain('HOME_WRITABLE');
  }, 60_000);
});

describe("the bubblewrap shim a root launcher gives the runtime", () => {
  /** Runs the shim with a stand-in for bubblewrap that prints the arguments it gets, one a line. */
  const shim = (args: string[]) => {
    const fake = path.join(root, 'fake-bwrap');
    // Its command line first, then every argument it got, one a line, those in an --args pipe included.
    fs.writeFileSync(fake, `#!/bin/bash\necho "ARGV $*"\nif [ "$1" = --args ]; then tr '\\0' '\\n' <&"$2"; shift 2; fi\nprintf '%s\\n' "$@"\n`, { mode: 0o700 });
    const file = path.join(root, `bwrap-shim-${++calls}`);
    fs.writeFileSync(file, bwrapShim(fake), { mode: 0o700 });
    return spawnSync(file, args, { encoding: 'utf8' });
  };
  const runtimeCall = ['--new-session', '--ro-bind', '/', '/', '--tmpfs', '/work', '--ro-bind', '/work/a/b/c', '/work/a/b/c', '--tmpfs', '/tmp', '--dev', '/dev', '--unshare-pid', '--unshare-user', '--cap-drop', 'ALL', '--cap-add', 'CAP_SETFCAP', '--proc', '/proc', '--', '/bin/bash', '-c', 'echo --unshare-user'];

  it('swaps the user namespace for the capabilities setpriv needs, opens the folders it makes, and keeps the command as is', () => {
    const r = shim(runtimeCall);
    expect(r.status).toBe(0);
    const [argv, ...args] = r.stdout.trimEnd().split('\n');
    // The options (proxy credentials, host paths) are off bubblewrap's command line.
    expect(argv).toBe('ARGV --args 3 -- /bin/bash -c echo --unshare-user');
    expect(args).not.toContain('--unshare-user');
    expect(args).not.toContain('CAP_SETFCAP');
    expect(args.join(' ')).toContain('--cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID --cap-add CAP_SETPCAP');
    expect(args.join(' ')).toContain('--perms 0755 --dir /work/a --perms 0755 --dir /work/a/b --ro-bind /work/a/b/c /work/a/b/c');
    expect(args.join(' ')).toContain('--perms 1777 --tmpfs /tmp');
    expect(args.slice(-4)).toEqual(['--', '/bin/bash', '-c', 'echo --unshare-user']);
  });

  it('refuses a call of a shape it does not know rather than run a hand as root', () => {
    for (const odd of [
      runtimeCall.filter((a) => a !== '--unshare-user'),
      runtimeCall.map((a) => (a === 'CAP_SETFCAP' ? 'CAP_SYS_ADMIN' : a)),
      ['--some-new-option', ...runtimeCall],
    ]) {
      const r = shim(odd);
      expect(r.status).toBe(70);
      expect(r.stderr).toContain('refusing to run a hand as root');
    }
  });

  it('passes the runtime probes through untouched', () => {
    expect(shim(['--version']).stdout).toBe('ARGV --version\n--version\n');
  });
});
