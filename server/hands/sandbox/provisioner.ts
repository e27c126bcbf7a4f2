import 'server-only';
import fs from 'node:fs/promises';
import path from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { DirMountPoint } from '~/server/hands/dir-mounts';
import { type NamedMcpHand, connectMcpHand } from '~/server/hands/mcp-hand';
import { buildHandSnapshot, handBundleDir } from '~/server/hands/paddock-hand/bundle';
import type { Provisioner, SuspendableHand } from '~/server/hands/provisioner';
import { HandHosts } from '~/server/hands/sandbox/hand-hosts';
import { HostedTransport } from '~/server/hands/sandbox/hosted-transport';
import { NoCompilerError, buildNativeExec } from '~/server/hands/sandbox/native-exec-build';
import { logger } from '~/server/log';
import { buildLauncherBundle } from '~/server/hands/sandbox/launcher-bundle';
import type { HandSecret } from '~/server/hands/sandbox/hand-secret';
import { DEFAULT_HAND_LIMITS, type HandLimits } from '~/lib/hand-limits';
import { effectiveLimits } from '~/server/hands/sandbox/limits';
import { runtimeTmpDir, sandboxPolicy } from '~/server/hands/sandbox/policy';
import { SecretsFirstTransport } from '~/server/hands/sandbox/secrets-first-transport';
import { checkSandboxAvailable, launcherInvocation } from '~/server/hands/sandbox/spawn-sandboxed';
import { cleanEnv, stderrTail } from '~/server/hands/stdio-env';
import { handFolderOf, WORKSPACE_SUBDIR } from '~/server/hands/workspaces';

export interface LocalHandOptions {
  /** The server's data dir: hidden from sandboxed hands. */
  dataDir: string;
  /** Where each hand gets its own fresh workspace folder. */
  workspacesDir: string;
  masterKeyFile?: string;
  /** Repo root holding paddock-hand's source; default process.cwd(). */
  root?: string;
  /** The operator's bounds on every hand; an agent's `resources` may only lower them. */
  limits?: HandLimits;
  /**
   * One launcher per network policy, shared by its hands (launcher-host.ts), instead of one per
   * hand; default on (PADDOCK_SHARED_LAUNCHER=0 turns it off). Hands with secrets always get their own.
   */
  sharedLaunchers?: boolean;
  /**
   * What runs inside a shared launcher's sandbox: `native`, a small resident executor (C, built on
   * first use; the tools run in the launcher, native-hand.ts), or `node`, paddock-hand itself.
   * Default PADDOCK_HAND_EXECUTOR, else native. Hands with secrets, hands without shared launchers,
   * and every hand when there is no C compiler (said once), run paddock-hand.
   */
  executor?: HandExecutor;
}

export type HandExecutor = 'native' | 'node';

const log = logger('hands.sandbox');

/**
 * V8 flags for an idle-most-of-the-time process: a 1 MB young generation instead of 16 MB costs a
 * few more minor GCs and saves resident memory in every hand.
 */
export const HAND_NODE_FLAGS = ['--max-semi-space-size=1'];

/** paddock-hand started from its startup snapshot (bundle.ts); its own options follow. */
export const handCommand = (snapshot: string): string[] => [process.execPath, ...HAND_NODE_FLAGS, '--snapshot-blob', snapshot, '--'];

/** The native executor, or null (paddock-hand then) when this machine cannot build it: said once. */
async function nativeExec(root: string): Promise<string | null> {
  try {
    return await buildNativeExec(root);
  } catch (e) {
    if (!(e instanceof NoCompilerError)) throw e;
    log.warn(`hands run paddock-hand (Node) in their sandbox: ${e.message}`);
    return null;
  }
}

/**
 * Hands as long-lived paddock-hand processes on this machine, one per hand, each with a fresh
 * workspace: `sandbox` inside bubblewrap (through the sandbox launcher, one policy per hand),
 * `local` as a plain process, only when the operator opted in (PADDOCK_ALLOW_UNSANDBOXED).
 */
export function createLocalHandProvisioner(o: LocalHandOptions): Provisioner {
  const root = o.root ?? process.cwd();
  const operatorLimits = o.limits ?? DEFAULT_HAND_LIMITS;
  // Built once per provisioner; a failed build is tried again by the next provision.
  const executor = o.executor ?? (process.env.PADDOCK_HAND_EXECUTOR === 'node' ? 'node' : 'native');
  let bundles: Promise<{ hand: string; launcher: string; exec: string | null }> | null = null;
  const handCode = () =>
    (bundles ??= Promise.all([buildHandSnapshot(root), buildLauncherBundle(root), executor === 'native' ? nativeExec(root) : null])
      .then(([hand, launcher, exec]) => ({ hand, launcher, exec }))
      .catch((e: unknown) => {
        bundles = null;
        throw e;
      }));
  // One check shared by concurrent first provisions (a burst of parallel checks can misreport).
  let check: ReturnType<typeof checkSandboxAvailable> | null = null;
  /** What that check found: every launcher skips the runtime's checks (done once per server). */
  let tools: string | undefined;
  const hosts = (o.sharedLaunchers ?? process.env.PADDOCK_SHARED_LAUNCHER !== '0') ? new HandHosts() : null;

  return {
    async provision(handId, spec, opts): Promise<SuspendableHand> {
      if (spec.kind !== 'sandbox' && spec.kind !== 'local') throw new Error(`cannot make a ${spec.kind} hand here`);
      const fail = (message: string): never => {
        opts.onProgress?.('failed', message);
        throw new Error(message);
      };
      if (spec.kind === 'sandbox') {
        opts.onProgress?.('starting', 'checking that this machine can sandbox');
        check ??= checkSandboxAvailable();
        const result = await check;
        if (result.ok) tools = result.tools;
        if (!result.ok) {
          check = null; // an operator may install what is missing: check again next time
          fail(`${result.missing} (or set PADDOCK_ALLOW_UNSANDBOXED=1 and PADDOCK_DEFAULT_HAND=local to run hands without a sandbox, at your own risk)`);
        }
      }
      // Root's alone: no other user may reach into a workspace (a hand's files are its own uid's,
      // and a hand could chmod its folder open), so nothing a hand writes is anyone else's to run.
      await fs.mkdir(o.workspacesDir, { recursive: true, mode: 0o700 });
      await fs.chmod(o.workspacesDir, 0o700);
      // A resumed hand works on the folder it was suspended with; a new one gets a fresh folder.
      const resuming = opts.workspace !== undefined;
      const workspace = opts.workspace ?? path.join(await fs.mkdtemp(path.join(o.workspacesDir, `${handId}-`)), WORKSPACE_SUBDIR);
      await fs.mkdir(workspace, { recursive: true });
      /** What goes when the hand is released: its folder, workspace and masks together. */
      const handFolder = await handFolderOf(workspace, o.workspacesDir);
      const folder = handFolder ?? workspace;
      const limits = effectiveLimits(operatorLimits, spec.resources);
      let code: { hand: string; launcher: string; exec: string | null };
      try {
        code = await handCode();
      } catch (e) {
        // A resumed hand's files are the session's: a failed start must not delete them.
        if (!resuming) await fs.rm(folder, { recursive: true, force: true });
        return fail(e instanceof Error ? e.message : String(e));
      }
      const argv = [
        ...handCommand(code.hand),
        '--workspace',
        workspace,
        '--stdio',
        ...(limits.memoryMb ? ['--memory-mb', String(limits.memoryMb)] : []),
        ...(limits.cpuSeconds ? ['--cpu-seconds', String(limits.cpuSeconds)] : []),
      ];
      // The session's mounts (uploads, outputs) in the hand folder, bound at /mnt/… (dir-mounts.ts).
      const mountPoint = spec.kind === 'sandbox' && handFolder ? new DirMountPoint(path.join(handFolder, 'mnt')) : null;
      let transport: StdioClientTransport | HostedTransport;
      /** The sandboxed hand's private tmp (its HOME inside) and the launcher's runtime dir: gone with the hand. */
      let scratch: string[] = [];
      if (spec.kind === 'sandbox') {
        opts.onProgress?.('starting', 'launching paddock-hand in a sandbox');
        const policy = sandboxPolicy({
          workspace,
          // The runtime's masks go on the hand folder: the agent's `ls -la` shows its own files.
          ...(handFolder ? { protectRoot: handFolder } : {}),
          dataDir: o.dataDir,
          workspacesDir: o.workspacesDir,
          serverDir: root,
          handCode: [handBundleDir()],
          limits: { maxProcs: limits.maxProcs, memoryMb: limits.memoryMb, fileSizeMb: limits.fileSizeMb },
          allowedDomains: spec.allowedDomains ?? [],
          ...(spec.network ? { network: spec.network } : {}),
          ...(o.masterKeyFile ? { masterKeyFile: o.masterKeyFile } : {}),
          ...(mountPoint ? { mounts: mountPoint.bindMounts() } : {}),
        });
        scratch = [policy.tmpDir, runtimeTmpDir(policy)];
        let secrets: HandSecret[];
        try {
          secrets = (await spec.secrets?.()) ?? [];
        } catch (e) {
          if (!resuming) await fs.rm(folder, { recursive: true, force: true });
          return fail(`could not read the session's secrets: ${e instanceof Error ? e.message : String(e)}`);
        }
        if (hosts && secrets.length === 0) {
          transport = new HostedTransport(async () => {
            let host = hosts.for(policy, code.launcher, tools);
            // The native executor in the sandbox, paddock-hand's tools served by the launcher (native-hand.ts).
            const serve = code.exec ? { root: workspace, memoryMb: limits.memoryMb, cpuSeconds: limits.cpuSeconds } : undefined;
            // Its workspace on its command line (it reads no arguments): which hand a process is, as paddock-hand's shows.
            const handArgv = code.exec ? [code.exec, '--workspace', workspace] : argv;
            const hand = await host.open(policy, handArgv, {}, serve).catch(async (e: unknown) => {
              // A launcher that has just died (killed, OOM) is replaced once; any other failure is the hand's.
              await Promise.race([host.exited, new Promise((r) => setTimeout(r, 500))]);
              if (host.alive) throw e;
              host = hosts.for(policy, code.launcher, tools);
              return host.open(policy, handArgv, {}, serve);
            });
            void hand.exited.then(() => hosts.released(host));
            return hand;
          });
        } else {
          const inv = launcherInvocation({ policy, command: argv, launcher: code.launcher, secrets, ...(tools ? { tools } : {}) });
          const params = { command: inv.command, args: inv.args, env: inv.env, cwd: workspace, stderr: 'pipe' as const };
          transport = secrets.length > 0 ? new SecretsFirstTransport(params, secrets) : new StdioClientTransport(params);
        }
      } else {
        opts.onProgress?.('starting', 'starting paddock-hand WITHOUT a sandbox (PADDOCK_ALLOW_UNSANDBOXED)');
        transport = new StdioClientTransport({ command: argv[0]!, args: argv.slice(1), env: cleanEnv(), cwd: workspace, stderr: 'pipe' });
      }
      const tail = stderrTail(transport);
      let hand: NamedMcpHand;
      try {
        hand = await connectMcpHand({
          id: handId,
          kind: spec.kind,
          transport,
          signal: opts.signal,
          lossDetail: () => {
            const t = tail();
            return t ? `its process stopped; last stderr:\n${t}` : 'its process stopped';
          },
        });
      } catch (e) {
        // A resumed hand's files are the session's: a failed start must not delete them.
        if (!resuming) await fs.rm(folder, { recursive: true, force: true });
        const t = tail();
        return fail(`${spec.kind} hand did not start: ${e instanceof Error ? e.message : String(e)}${t ? `\n${t}` : ''}`);
      }
      opts.onProgress?.('ready');
      // Released hands are cattle: their workspace goes with them. A suspended one keeps it.
      return {
        get id() {
          return hand.id;
        },
        kind: hand.kind,
        lost: hand.lost,
        workspace,
        ...(mountPoint ? { mountPoint } : {}),
        tools: () => hand.tools(),
        execute: (name, input, ctx) => hand.execute(name, input, ctx),
        rename: (id) => hand.rename(id),
        suspend: () => hand.close(),
        close: async () => {
          await hand.close();
          await fs.rm(folder, { recursive: true, force: true });
          // Suspend does not come here: a resumed hand finds its tmp again (it is derived from the workspace).
          await Promise.all(scratch.map((d) => fs.rm(d, { recursive: true, force: true })));
        },
      };
    },
  };
}
