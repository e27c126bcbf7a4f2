/**
 * Isolation between sessions, proven from inside real sandboxed paddock-hand processes (the
 * production provisioner, bubblewrap, the default workspaces folder under the OS tmp dir): what
 * one hand writes, another cannot find, and no hand sees the server's home, data or project.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hand } from '~/lib/hand';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { cmdline, descendants } from '~/server/hands/testing/processes';

const SECRET = `S3CR3T-${randomBytes(8).toString('hex')}`;
const tag = randomBytes(4).toString('hex');

let root: string;
let dataDir: string;
let workspacesDir: string;
let homeFile: string;
let projectFile: string;
let a: Hand;
let b: Hand;
let calls = 0;

const run = (hand: Hand, command: string, timeout_ms = 60_000) =>
  hand.execute('bash', { command, timeout_ms }, { callId: `call-${++calls}`, signal: new AbortController().signal });

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-isolation-'));
  dataDir = path.join(root, 'data');
  fs.mkdirSync(dataDir);
  fs.writeFileSync(path.join(dataDir, 'paddock.sqlite'), `SQLite format 3\0${SECRET}`);
  // Where hands live by default: the OS tmp dir, shared by every hand and the server.
  workspacesDir = path.join(os.tmpdir(), `paddock-isolation-ws-${tag}`);
  homeFile = path.join(os.homedir(), `.paddock-isolation-${tag}`);
  fs.writeFileSync(homeFile, SECRET, { mode: 0o600 });
  projectFile = path.join(process.cwd(), `.env.isolation-${tag}`);
  fs.writeFileSync(projectFile, `KEY=${SECRET}\n`, { mode: 0o600 });
  const provisioner = createLocalHandProvisioner({ dataDir, workspacesDir });
  const signal = new AbortController().signal;
  [a, b] = await Promise.all([
    provisioner.provision('iso-a', { kind: 'sandbox' }, { signal }),
    provisioner.provision('iso-b', { kind: 'sandbox' }, { signal }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  for (const p of [homeFile, projectFile, workspacesDir, root]) if (p) fs.rmSync(p, { recursive: true, force: true });
});

describe('isolation between hands', () => {
  it("a hand cannot find another session's files anywhere on the file system", async () => {
    const wrote = await run(
      a,
      `echo ${SECRET} > secret.txt && echo ${SECRET} > "$TMPDIR/secret" && echo ${SECRET} > "$HOME/secret" && { echo ${SECRET} > /tmp/secret-${tag}; pwd; }`,
    );
    const workspaceOfA = wrote.trim().split('\n').at(-2)!;
    expect(fs.readFileSync(path.join(workspaceOfA, 'secret.txt'), 'utf8')).toContain(SECRET);

    // The whole file system but the kernel's views and the system's own read-only trees
    // (a hand cannot write there, so nothing of A can be there; checked for /usr and /opt below).
    // /opt is left out too: on this machine it holds gigabytes of package mirrors, and a cold
    // page cache made the search outlast its timeout.
    const search = await run(
      b,
      `timeout 50 grep -rsl ${SECRET.slice(0, 7)}${'\\'}${SECRET.slice(7)} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr --exclude-dir=opt --exclude-dir=node_modules --exclude-dir=.git; echo "GREP_EXIT=$?"
       ls -A ${workspaceOfA} ${path.dirname(workspaceOfA)} 2>&1 | head -5
       for d in /usr /opt; do touch "$d/paddock-probe-${tag}" 2>/dev/null && echo "WROTE_IN $d"; done`,
      90_000,
    );
    // Searched to the end (124 would be the timeout) and matched nothing (0); 2 = some file
    // could not be read, which -s keeps quiet about.
    expect(search).toMatch(/GREP_EXIT=[12]\n/);
    expect(search.split('GREP_EXIT')[0]!.trim()).toBe(''); // no file named
    expect(search).not.toContain(SECRET);
    expect(search).not.toContain('secret.txt');
    expect(search).not.toContain('WROTE_IN');
  }, 120_000);

  it("a hand cannot read the server's home, data dir, project folder or other processes' /proc", async () => {
    const serverPid = process.pid;
    const otherHand = descendants(serverPid).find((pid) => cmdline(pid).includes('iso-a-'));
    expect(otherHand).toBeDefined();
    const out = await run(
      b,
      `cat ${homeFile} ${path.join(dataDir, 'paddock.sqlite')} ${projectFile} ${path.join(process.cwd(), 'package.json')} 2>&1
       echo "== ls"; ls -A ${os.homedir()} ${dataDir} ${process.cwd()} 2>&1
       echo "== proc"; for pid in ${serverPid} ${otherHand ?? 1}; do cat /proc/$pid/environ /proc/$pid/cmdline 2>&1; done
       echo; ls /proc | grep -c '^[0-9]'`,
    );
    expect(out).not.toContain(SECRET);
    expect(out).not.toContain('"scripts"'); // package.json
    expect(out).not.toContain('paddock-hand'); // another hand's command line
    expect(out).not.toContain('iso-a-');
    expect(out).not.toMatch(/^(PATH|HOME|PADDOCK_[A-Z_]*)=/m);
    // The home and project folders are empty inside the hand (but for the sandbox runtime's own
    // helper binaries under node_modules, bound back read-only).
    const listing = out.split('== ls')[1]?.split('== proc')[0] ?? '';
    expect(listing).not.toContain(`.paddock-isolation-${tag}`);
    expect(listing).not.toContain('package.json');
    // Only the hand's own few processes exist in its /proc.
    expect(Number(out.trim().split('\n').at(-2))).toBeLessThan(20);
  }, 60_000);
});
