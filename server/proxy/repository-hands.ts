import 'server-only';
import { WORKSPACE_ROOT } from '~/lib/agent';
import type { NewEvent, StoredEvent } from '~/lib/events';
import type { Hand, HandKind } from '~/lib/hand';
import { errorFields, logger } from '~/server/log';
import type { GitProxy } from '~/server/proxy/git-proxy';
import { repositoryErrorType } from '~/server/proxy/repository-errors';
import type { RepositoryResource, RepositoryStore } from '~/server/proxy/repository-store';
import type { HandRepositories } from '~/server/hands/repository-port';

const log = logger('repositories');

/** Hands with a shell on this machine, whose network goes through the sandbox's proxy to ours. */
const CLONING_KINDS: ReadonlySet<HandKind> = new Set(['sandbox', 'local']);
const CLONE_TIMEOUT_MS = 10 * 60_000;

/** One shell word, quoted: nothing in it is expanded. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A mount path (`/workspace/…`) as a path under the hand's workspace (bash starts there). */
export function workspaceRelative(mountPath: string): string {
  return `./${mountPath.slice(WORKSPACE_ROOT.length + 1)}`;
}

/**
 * The script a hand runs to clone one repository through the git proxy. It runs git INSIDE the
 * hand (the server never runs a program in a workspace); the remote it is given carries only the
 * capability. It ends with one `paddock-clone:` line saying how it went.
 */
export function cloneScript(r: Pick<RepositoryResource, 'mount_path' | 'checkout'>, remote: string): string {
  const dir = shellQuote(workspaceRelative(r.mount_path));
  const branch = r.checkout?.type === 'branch' ? ` --branch=${shellQuote(r.checkout.name)}` : '';
  const lines = [
    'export GIT_TERMINAL_PROMPT=0',
    `if [ -e ${dir}/.git ]; then echo 'paddock-clone: present'; exit 0; fi`,
    `mkdir -p "$(dirname ${dir})"`,
    // Tried thrice: the sandbox's proxy may still be starting when a fresh hand's first command runs.
    `n=0; until git clone --quiet${branch} -- ${shellQuote(remote)} ${dir} 2>&1; do n=$((n+1)); if [ $n -ge 3 ]; then echo 'paddock-clone: failed clone'; exit 0; fi; sleep 0.5; done`,
  ];
  if (r.checkout?.type === 'commit') {
    const sha = shellQuote(r.checkout.sha);
    lines.push(`git -C ${dir} checkout --quiet --detach ${sha} 2>&1 || { git -C ${dir} fetch --quiet origin ${sha} 2>&1 && git -C ${dir} checkout --quiet --detach FETCH_HEAD 2>&1; } || { echo 'paddock-clone: failed checkout'; exit 0; }`);
  }
  lines.push(`echo 'paddock-clone: ok'`);
  return lines.join('\n');
}

export interface RepositoryScope {
  sessionId: string;
  emit: (event: NewEvent, idempotencyKey: string) => Promise<StoredEvent>;
  signal: AbortSignal;
}

/**
 * A session's repositories in its hands: the git proxy's address on their allowlist, a clone
 * through it right after a hand is provisioned (a failure is a `session.error` of the SDK's
 * repository type naming the URL; the session goes on without it), and the hand's capabilities
 * revoked when it is released or lost (the session's delete removes them all: `RepositoryStore.removeSession`).
 */
export class RepositoryHands implements HandRepositories {
  constructor(
    private readonly repositories: RepositoryStore,
    private readonly proxy: GitProxy,
  ) {}

  /** The git proxy's `host:port` when the session has repositories (what its sandbox hands may reach), else nothing. */
  async hosts(sessionId: string): Promise<string[]> {
    return (await this.repositories.list(sessionId)).length > 0 ? [this.proxy.host] : [];
  }

  /** Clones each of the session's repositories into a new hand; never throws (a failure is logged and recorded). */
  async cloneInto(scope: RepositoryScope, handId: string, hand: Hand): Promise<void> {
    if (!CLONING_KINDS.has(hand.kind)) return;
    const resources = await this.repositories.list(scope.sessionId);
    for (const r of resources) {
      const t0 = performance.now();
      let outcome: string;
      // A host the network policy refuses is not tried at all (the git proxy would refuse each request anyway).
      const refused = await this.proxy.refusal(r.url);
      if (refused !== null) outcome = `paddock-clone: failed clone\n${refused}`;
      else outcome = await this.#clone(scope, handId, hand, r);
      const status = /paddock-clone: (ok|present|failed (clone|checkout))/.exec(outcome)?.[1] ?? 'failed clone';
      const fields = { session: scope.sessionId, hand: handId, resource: r.id, ms: Math.round(performance.now() - t0) };
      if (status === 'ok' || status === 'present') {
        log.info('repository cloned', { ...fields, url: r.url });
        await scope
          .emit({ type: 'hand.repository_cloned', hand: handId, resource_id: r.id, repository_url: r.url, mount_path: r.mount_path, clone_ms: fields.ms }, `repository:${handId}:${r.id}:cloned`)
          .catch((e: unknown) => log.error('could not record a cloned repository', { ...fields, ...errorFields(e) }));
        continue;
      }
      const type = repositoryErrorType(status === 'failed checkout' ? 'checkout' : 'clone', outcome);
      log.warn('repository not cloned', { ...fields, url: r.url, type });
      // git's own words, minus the remote (it names the capability) and our marker.
      const detail = outcome.replace(/https?:\/\/\S+/g, '<remote>').replace(/paddock-clone:.*$/gm, '').replace(/exit code: \d+\s*$/, '').trim().slice(-500);
      await scope
        .emit(
          { type: 'session.error', error: { type, message: `${r.url} was not cloned into ${handId} at ${r.mount_path}${detail ? `: ${detail}` : ''}`, repository_url: r.url, retry_status: { type: 'retrying' } } },
          `repository:${handId}:${r.id}:error`,
        )
        .catch((e: unknown) => log.error('could not record a repository error', { ...fields, ...errorFields(e) }));
    }
  }

  /** Runs the clone script in the hand: its output, ending with the `paddock-clone:` line. */
  async #clone(scope: RepositoryScope, handId: string, hand: Hand, r: RepositoryResource): Promise<string> {
    try {
      const capability = await this.repositories.issueCapability(scope.sessionId, r.id, handId);
      const signal = AbortSignal.any([scope.signal, AbortSignal.timeout(CLONE_TIMEOUT_MS)]);
      return await hand.execute('bash', { command: cloneScript(r, this.proxy.remoteUrl(capability, r.url)), timeout_ms: CLONE_TIMEOUT_MS }, { callId: `clone:${handId}:${r.id}`, signal });
    } catch (e) {
      return `paddock-clone: failed clone\n${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /** The hand is released, lost or moved away: its capabilities stop working at once. */
  async revoke(sessionId: string, handId: string): Promise<void> {
    await this.repositories.revokeHand(sessionId, handId).catch((e: unknown) => log.error('could not revoke git capabilities', { session: sessionId, hand: handId, ...errorFields(e) }));
  }
}
