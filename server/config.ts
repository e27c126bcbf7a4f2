import 'server-only';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { isHostEntry } from '~/lib/network-policy';
import { DEFAULT_HAND_LIMITS, type HandLimits } from '~/lib/hand-limits';
import { decodeMasterKeyText } from '~/lib/master-key-text';

/**
 * The environment, validated once at start. A bad value stops the server with a message naming
 * the variable, instead of failing later in some request.
 */
const RemoteHands = z.record(z.string().min(1), z.object({ url: z.url(), token: z.string().min(1).optional() }));

const CommaList = z
  .string()
  .default('')
  .transform((v) => v.split(',').map((d) => d.trim()).filter(Boolean));

const Env = z.object({
  PADDOCK_DATA_DIR: z.string().min(1).default('./.paddock'),
  PADDOCK_WORKSPACES_DIR: z.string().min(1).optional(),
  /** postgres://… stores sessions in PostgreSQL (several server instances can share them). */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_AUTH_TOKEN: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.url().optional(),
  /** The SDK's current Sonnet; never a deprecated id. */
  PADDOCK_MODEL: z.string().min(1).default('claude-sonnet-5-5'),
  PADDOCK_MAX_TOKENS: z.coerce.number().int().positive().default(8192),
  /** The model that grades outcomes; unset: the session's agent's own. */
  PADDOCK_GRADER_MODEL: z.string().min(1).optional(),
  PADDOCK_MODEL_RETRIES: z.coerce.number().int().min(0).max(20).default(4),
  PADDOCK_RETRY_BASE_MS: z.coerce.number().int().min(0).default(500),
  PADDOCK_LEASE_TTL_MS: z.coerce.number().int().min(200).default(15_000),
  PADDOCK_SWEEP_MS: z.coerce.number().int().min(50).default(2_000),
  /** At most this many child threads of one multiagent session run a step at once (docs/threads.md). */
  PADDOCK_MAX_RUNNING_THREADS: z.coerce.number().int().min(1).max(1_000).default(25),
  /** A self-hosted work item's lease when its worker asks for none: lost this long after its last heartbeat. */
  PADDOCK_WORK_LEASE_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
  /** Back-off while the session store is unreachable: first and longest wait between retries. */
  PADDOCK_STORE_RETRY_BASE_MS: z.coerce.number().int().min(10).default(200),
  PADDOCK_STORE_RETRY_MAX_MS: z.coerce.number().int().min(10).default(5_000),
  /** The hand a session gets on its first tool call. */
  PADDOCK_DEFAULT_HAND: z.enum(['sandbox', 'memory', 'local']).default('sandbox'),
  /**
   * What runs in a sandbox hand: `native`, a small resident executor (C, compiled on first use with
   * the machine's gcc; the tools run in the shared launcher), or `node`, paddock-hand. Hands with
   * secrets, and all hands where nothing compiles C, run paddock-hand either way.
   */
  PADDOCK_HAND_EXECUTOR: z.enum(['native', 'node']).default('native'),
  /** Opt-in: when the machine cannot sandbox, run hands as plain local processes. Unsafe. */
  PADDOCK_ALLOW_UNSANDBOXED: z.enum(['0', '1', 'true', 'false']).default('0').transform((v) => v === '1' || v === 'true'),
  /**
   * On SIGINT/SIGTERM: turns are cut off and their leases released, idle hands suspended (files
   * kept), live streams told the server is restarting; the process is gone within this long.
   */
  PADDOCK_STOP_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(5_000),
  /** Pre-started sandbox hands kept ready (0 turns the pool off). */
  PADDOCK_WARM_POOL: z.coerce.number().int().min(0).max(32).default(2),
  /**
   * The most the pool grows to while sessions arrive faster than it refills (each miss adds one).
   * Off by default (the pool's size): on 2 cores, extra starts took CPU from the turns themselves
   * (`PADDOCK_BENCH_PARTS=api`: p50 send → idle 627 ms at 8 against 475 ms at 2). Raise it with cores.
   */
  PADDOCK_WARM_POOL_MAX: z.coerce.number().int().min(0).max(64).default(0),
  /**
   * The cap on the warm pool, which follows the measured arrival rate up to it (PADDOCK_WARM_POOL
   * is its floor). Beyond the floor it starts one hand at a time and only while the event loop is
   * calm, so a refill takes no CPU from a running turn. Unset: PADDOCK_WARM_POOL_MAX (its older name).
   * At 8 on 2 shared cores (`PADDOCK_BENCH_PARTS=api`, two runs each): 20 sessions at once p95
   * 14.2 / 15.0 s → 6.3 / 8.2 s; 20 back to back p50 488 / 528 → 1,049 / 557 ms (noisy): off by default.
   */
  PADDOCK_POOL_MAX: z.coerce.number().int().min(0).max(64).optional(),
  /**
   * Local hands starting at once (a start is mostly CPU); the rest wait their turn, sessions before
   * warm-pool refills. Default: the machine's cores.
   */
  PADDOCK_HAND_START_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(() => Math.max(1, os.availableParallelism())),
  /**
   * A local hand with no call for this long is suspended: its process stops, its workspace stays,
   * and the next call resumes it on the same files (0 = never).
   */
  PADDOCK_HAND_IDLE_SECONDS: z.coerce.number().int().min(0).default(300),
  /** Live local hand processes per server; past it the least recently used idle ones are suspended. */
  PADDOCK_MAX_LIVE_HANDS: z.coerce.number().int().min(1).default(16),
  /** Hosts every sandbox hand may reach, comma-separated (a session adds its own `allowed_domains`). */
  PADDOCK_HAND_ALLOWED_DOMAINS: CommaList,
  /**
   * Opt-in: sessions may run in environments with `unrestricted` networking, whose hands (and
   * web_fetch) then reach any public host; private, loopback and link-local addresses stay refused
   * unless listed. Off: such environments are refused.
   */
  PADDOCK_ALLOW_UNRESTRICTED_NETWORK: z.enum(['0', '1', 'true', 'false']).default('0').transform((v) => v === '1' || v === 'true'),
  /**
   * Hosts or addresses the server may connect to on a user's behalf although they are private,
   * loopback, link-local or this machine's own (an MCP server, OAuth token endpoint or git host
   * the operator runs nearby), comma-separated: `127.0.0.1`, `localhost:8080`, `[::1]:3000`,
   * `*.corp.example` (no port: any). Everything else such a connection goes to must be public.
   */
  PADDOCK_OUTBOUND_ALLOW: CommaList.refine((entries) => entries.every(isHostEntry), {
    message: 'must be comma-separated hosts or IP addresses, each with an optional :port (e.g. 127.0.0.1,localhost:8080,[::1]:3000,*.corp.example)',
  }),
  /**
   * Bounds on every sandbox hand (0 = none): processes alive at once and memory of the whole hand,
   * the largest file it may write, CPU time per bash command. An agent may ask for less, never more.
   */
  PADDOCK_HAND_MAX_PROCS: z.coerce.number().int().min(0).default(DEFAULT_HAND_LIMITS.maxProcs),
  PADDOCK_HAND_MEMORY_MB: z.coerce.number().int().min(0).default(DEFAULT_HAND_LIMITS.memoryMb),
  PADDOCK_HAND_FILE_SIZE_MB: z.coerce.number().int().min(0).default(DEFAULT_HAND_LIMITS.fileSizeMb),
  PADDOCK_HAND_CPU_SECONDS: z.coerce.number().int().min(0).default(DEFAULT_HAND_LIMITS.cpuSeconds),
  /** Remote hands the brain may attach by name: {"name": {"url": "http://…/mcp", "token": "…"}}. */
  PADDOCK_REMOTE_HANDS: z
    .string()
    .default('{}')
    .transform((v, ctx) => {
      // Not the parser's message: it quotes the text around the mistake, which may be a token.
      let json: unknown;
      try {
        json = JSON.parse(v);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON like {"name":{"url":"http://host/mcp","token":"…"}} (it is not valid JSON)' });
        return z.NEVER;
      }
      const hands = RemoteHands.safeParse(json);
      if (hands.success) return hands.data;
      const where = hands.error.issues.map((i) => i.path.join('.') || '(top)').join(', ');
      ctx.addIssue({ code: 'custom', message: `must be JSON like {"name":{"url":"http://host/mcp","token":"…"}} (wrong at ${where})` });
      return z.NEVER;
    }),
  /**
   * The git proxy's loopback port (0: an ephemeral one each start). Fixed, the remotes of
   * repositories cloned into hands keep working after a restart (suspended hands resume on them).
   */
  PADDOCK_GIT_PROXY_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  PADDOCK_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** The address people reach Paddock at (behind a reverse proxy, say): its host is allowed, its origin may write. */
  PADDOCK_PUBLIC_URL: z.url().optional(),
  /** More Host names (or host:port) to answer besides loopback and the public URL's, comma-separated. */
  PADDOCK_ALLOWED_HOSTS: CommaList,
  /**
   * How many reverse proxies in front of Paddock append to `X-Forwarded-For` (the docs widget's
   * per-IP limits read the client's address there). 0: none; the address is the socket's, which
   * Next writes into that header only when the request did not bring one.
   */
  PADDOCK_TRUSTED_PROXIES: z.coerce.number().int().min(0).max(10).default(0),
  /** A fixed owner sign-in token (for automation); without it each start prints a one-time sign-in URL. */
  PADDOCK_OWNER_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** An API key accepted besides those made on the settings page (for automation). */
  PADDOCK_API_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  /** The vault's master key (32 bytes: base64 or 64 hex characters); without it `<dataDir>/master.key` is made and used. */
  PADDOCK_MASTER_KEY: z
    .string()
    .refine((v) => decodeMasterKeyText(v) !== null, 'must be 32 bytes written as base64 or as 64 hex characters (e.g. `openssl rand -base64 32`)')
    .optional(),
  /** How long a browser sign-in lasts. */
  PADDOCK_SESSION_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  /** Largest request body the API reads (413 above it). */
  PADDOCK_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(2 * 1024 * 1024),
  /** Longest text of one user message, in characters (all its text blocks together). */
  PADDOCK_MAX_MESSAGE_CHARS: z.coerce.number().int().min(1).default(100_000),
  /** Largest event a user or tab may store, as JSON bytes. */
  PADDOCK_MAX_EVENT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
  /** Where files' bytes live: `auto` = the data dir with SQLite, the database with DATABASE_URL. */
  PADDOCK_BLOB_STORE: z.enum(['auto', 'dir', 'database', 's3']).default('auto'),
  /** With PADDOCK_BLOB_STORE=s3: the bucket, and for an S3-compatible server its endpoint (credentials from the AWS SDK's own chain: AWS_ACCESS_KEY_ID…). */
  PADDOCK_S3_BUCKET: z.string().min(3).max(63).optional(),
  PADDOCK_S3_ENDPOINT: z.string().url().optional(),
  PADDOCK_S3_REGION: z.string().min(1).default('us-east-1'),
  PADDOCK_S3_FORCE_PATH_STYLE: z.enum(['0', '1', 'true', 'false']).default('0').transform((v) => v === '1' || v === 'true'),
  PADDOCK_S3_PREFIX: z.string().max(200).default(''),
  /** Largest file the Files API takes in one upload (413 above it). */
  PADDOCK_MAX_UPLOAD_BYTES: z.coerce.number().int().min(1024).default(500 * 1024 * 1024),
  /** Largest file the IDE may write into a hand. */
  PADDOCK_MAX_FILE_WRITE_BYTES: z.coerce.number().int().min(1).default(1024 * 1024),
  /** A browser tab that claimed a call must answer within this (longer than the longest bash timeout), or the call fails naming the hand. */
  PADDOCK_BROWSER_CALL_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(15 * 60_000),
}).refine((e) => e.PADDOCK_STORE_RETRY_BASE_MS <= e.PADDOCK_STORE_RETRY_MAX_MS, {
  message: 'must not exceed PADDOCK_STORE_RETRY_MAX_MS',
  path: ['PADDOCK_STORE_RETRY_BASE_MS'],
}).refine((e) => e.PADDOCK_BLOB_STORE !== 's3' || e.PADDOCK_S3_BUCKET !== undefined, {
  message: 'must be set when PADDOCK_BLOB_STORE=s3',
  path: ['PADDOCK_S3_BUCKET'],
});

export type Config = z.infer<typeof Env> & {
  dataDir: string;
  /** Where hands get their workspace folders (outside dataDir, which hands must not read). */
  workspacesDir: string;
  /** The operator's bounds on every sandbox hand (PADDOCK_HAND_*). */
  handLimits: HandLimits;
  /** 'anthropic' when a key (or an Anthropic-compatible base URL) is configured, else the demo brain. */
  brain: 'anthropic' | 'demo';
  /** The warm pool's cap: PADDOCK_POOL_MAX (or PADDOCK_WARM_POOL_MAX), never below PADDOCK_WARM_POOL. */
  poolMax: number;
};

/**
 * A setting that breaks a rule. Its message is one line naming each bad variable and its rule, and
 * never the value (it may be a key): what a start prints before it stops.
 */
export class ConfigError extends Error {
  constructor(readonly settings: string[], message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: Readonly<Record<string, string | undefined>> = process.env): Config {
  // An empty variable means unset (`ANTHROPIC_API_KEY= npm start` runs the demo brain).
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = Env.safeParse(present);
  if (!parsed.success) {
    const settings = [...new Set(parsed.error.issues.map((i) => String(i.path[0] ?? '')))];
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(settings, `invalid setting: ${issues.replace(/[\r\n]+/g, ' ')}`);
  }
  const c = parsed.data;
  const hasKey = Boolean(c.ANTHROPIC_API_KEY ?? c.ANTHROPIC_AUTH_TOKEN);
  // A local Anthropic-compatible server (Ollama, llama.cpp) needs a base URL but no real key.
  const brain = hasKey || c.ANTHROPIC_BASE_URL ? 'anthropic' : 'demo';
  // turbopackIgnore: runtime paths, not files to bundle (else Next traces the whole project).
  const dataDir = path.resolve(/*turbopackIgnore: true*/ c.PADDOCK_DATA_DIR);
  const workspacesDir = path.resolve(/*turbopackIgnore: true*/ c.PADDOCK_WORKSPACES_DIR ?? path.join(os.tmpdir(), 'paddock-workspaces'));
  const handLimits: HandLimits = {
    maxProcs: c.PADDOCK_HAND_MAX_PROCS,
    memoryMb: c.PADDOCK_HAND_MEMORY_MB,
    fileSizeMb: c.PADDOCK_HAND_FILE_SIZE_MB,
    cpuSeconds: c.PADDOCK_HAND_CPU_SECONDS,
  };
  const poolMax = Math.max(c.PADDOCK_WARM_POOL, c.PADDOCK_POOL_MAX ?? c.PADDOCK_WARM_POOL_MAX);
  return { ...c, dataDir, workspacesDir, handLimits, brain, poolMax };
}
