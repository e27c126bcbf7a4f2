import 'server-only';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Hand } from '~/lib/hand';
import { ExecMountPoint } from '~/server/hands/exec-mounts';
import { connectMcpHand, errorText, isMcpError } from '~/server/hands/mcp-hand';
import { cleanEnv, stderrTail } from '~/server/hands/stdio-env';
import type { ProvisionOptions, ProvisionSpec, Provisioner } from '~/server/hands/provisioner';
import { logger } from '~/server/log';

/**
 * Attaches an MCP server as a hand: over Streamable HTTP (paddock-hand in a container, another
 * machine) with an optional per-hand bearer token, or as a local stdio child process.
 */
type RemoteSpec = Extract<ProvisionSpec, { kind: 'remote' }>;

export interface RemoteProvisionerOptions {
  /** Per tool call (default 10 min); see `connectMcpHand`. */
  callTimeoutMs?: number;
  heartbeatMs?: number;
  /** Where `/mnt` is in the hands (tests: a folder of their own). */
  mountsRoot?: string;
}

const log = logger('remote-provisioner');

/** Where an HTTP hand lives, for messages: never the query string (it may carry a secret). */
function where(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function httpError(e: unknown, url: URL, hasToken: boolean): Error {
  if (e instanceof StreamableHTTPError && (e.code === 401 || e.code === 403)) {
    return new Error(
      hasToken
        ? `remote hand at ${where(url)} refused the token (${e.code})`
        : `remote hand at ${where(url)} requires a token (${e.code}); none was given`,
    );
  }
  if (e instanceof StreamableHTTPError && e.code !== undefined && e.code > 0) return new Error(`remote hand at ${where(url)} answered HTTP ${e.code}: ${e.message}`);
  if (isMcpError(e, ErrorCode.RequestTimeout)) return new Error(`remote hand at ${where(url)} did not complete the MCP handshake in time`);
  return new Error(`could not reach remote hand at ${where(url)}: ${errorText(e)}`);
}

function stdioError(e: unknown, cmdline: string, tail: string): Error {
  const stderr = tail ? `\n${tail}` : '';
  if (isMcpError(e, ErrorCode.ConnectionClosed)) return new Error(`command exited before the MCP handshake: ${cmdline}${stderr}`);
  if (isMcpError(e, ErrorCode.RequestTimeout)) return new Error(`command did not complete the MCP handshake in time: ${cmdline}${stderr}`);
  return new Error(`could not start ${cmdline}: ${errorText(e)}${stderr}`);
}

export function createRemoteProvisioner(options: RemoteProvisionerOptions = {}): Provisioner {
  async function attach(handId: string, spec: RemoteSpec, opts: ProvisionOptions): Promise<Hand> {
    const common = { id: handId, kind: 'remote' as const, signal: opts.signal, ...options };
    if (spec.transport === 'http') {
      let url: URL;
      try {
        url = new URL(spec.url);
      } catch {
        throw new Error(`remote hand url is not a valid URL: ${spec.url}`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`remote hand url must be http(s): ${where(url)}`);
      opts.onProgress?.('starting', `connecting to ${where(url)}`);
      const transport = new StreamableHTTPClientTransport(
        url,
        spec.token ? { requestInit: { headers: { Authorization: `Bearer ${spec.token}` } } } : undefined,
      );
      try {
        return await connectMcpHand({ ...common, transport });
      } catch (e) {
        throw opts.signal.aborted ? cancelled(handId) : httpError(e, url, Boolean(spec.token));
      }
    }
    const cmdline = [spec.command, ...(spec.args ?? [])].join(' ');
    opts.onProgress?.('starting', `starting ${cmdline}`);
    const transport = new StdioClientTransport({ command: spec.command, args: spec.args, cwd: spec.cwd, env: cleanEnv(), stderr: 'pipe' });
    const tail = stderrTail(transport);
    try {
      return await connectMcpHand({
        ...common,
        transport,
        lossDetail: () => {
          const t = tail();
          return t ? `its process stopped; last stderr:\n${t}` : 'its process stopped';
        },
      });
    } catch (e) {
      throw opts.signal.aborted ? cancelled(handId) : stdioError(e, cmdline, tail());
    }
  }

  return {
    async provision(handId, spec, opts) {
      if (spec.kind !== 'remote') throw new Error(`the remote provisioner cannot make a ${spec.kind} hand`);
      if (opts.signal.aborted) throw cancelled(handId);
      try {
        const hand = await attach(handId, spec, opts);
        opts.onProgress?.('ready');
        // The session's mounts go in through its bash tool, before each call (exec-mounts.ts).
        return Object.assign(hand, { mountPoint: new ExecMountPoint(hand, options.mountsRoot) });
      } catch (e) {
        const err = e instanceof Error ? e : new Error(String(e));
        log.info('remote hand failed to start', { hand: handId, transport: spec.transport });
        opts.onProgress?.('failed', err.message);
        throw err;
      }
    },
  };
}

function cancelled(handId: string): Error {
  return new Error(`provisioning hand ${handId} was cancelled`);
}
