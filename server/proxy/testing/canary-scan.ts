import fs from 'node:fs';
import path from 'node:path';
import { cmdline, descendants } from '~/server/hands/testing/processes';

/**
 * What to look for: the canary's random core (covers the plain and URL-encoded forms: hex and `-`
 * encode as themselves), and its base64 / base64url at each of the three alignments it can have
 * inside a longer encoded string (`Basic x-access-token:<canary>`, a JWT, …), trimmed to the
 * characters that do not depend on its neighbours.
 */
export function forms(canary: string): string[] {
  const out = new Set([canary.slice('canary-'.length), canary]);
  for (let k = 0; k < 3; k++) {
    const b64 = Buffer.from(`${'\0'.repeat(k)}${canary}`).toString('base64');
    const start = Math.ceil((k * 4) / 3) + 1;
    const end = Math.floor(((k + canary.length) * 4) / 3) - 1;
    const core = b64.slice(start, end);
    out.add(core);
    out.add(core.replaceAll('+', '-').replaceAll('/', '_'));
    out.add(encodeURIComponent(core));
  }
  return [...out];
}

/**
 * Asserts the scan saw what proves it live, then that no form of the canary is in it. Throws a
 * plain Error (so vitest and Playwright both report it), naming the scan and the form found.
 */
export function expectClean(what: string, text: string, canary: string, proof: string | RegExp): void {
  const live = typeof proof === 'string' ? text.includes(proof) : proof.test(text);
  if (!live) throw new Error(`${what}: the scan must see ${String(proof)} (it read ${text.length} characters)`);
  for (const f of forms(canary)) {
    const at = text.indexOf(f);
    if (at >= 0) throw new Error(`${what} holds the canary (as ${f}) near: ${text.slice(Math.max(0, at - 120), at + f.length + 40)}`);
  }
}

/** Every folder and file under a folder (not following links), files as latin1 text, each after its path. */
export function readTree(root: string): string {
  const parts: string[] = [];
  const walk = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        parts.push(`== ${p}/`);
        walk(p);
      }
      else if (e.isFile()) {
        try {
          parts.push(`== ${p}\n${fs.readFileSync(p).toString('latin1')}`);
        } catch {
          // a placeholder the sandbox made unreadable
        }
      } else if (e.isSymbolicLink()) parts.push(`== ${p} -> ${fs.readlinkSync(p)}`);
    }
  };
  walk(root);
  return parts.join('\n');
}

/** environ and cmdline of every process under this one (the hands' launchers, bwrap, paddock-hand, bash, git, …). */
export function processText(root = process.pid): { text: string; pids: number[] } {
  const pids = descendants(root);
  const parts = pids.map((pid) => {
    let environ = '';
    try {
      environ = fs.readFileSync(`/proc/${pid}/environ`, 'latin1').replaceAll('\0', '\n');
    } catch {
      // gone, or not ours to read
    }
    return `== ${pid}: ${cmdline(pid)}\n${environ}`;
  });
  return { text: parts.join('\n'), pids };
}


