import { ToolError } from '~/lib/hand';
import { parseToolInput } from '~/lib/tool-inputs';
import { TOOL_LIMITS, type ToolLimits } from '~/lib/workspace-tools/tool-limits';

/**
 * bash's rules on every hand that has a shell (paddock-hand, the WebContainer, the offline
 * engine): the timeout, the output cap and the trailer the model reads. Running the command is
 * each hand's own business. The toolset's `restart` is accepted and changes nothing: every
 * command already runs in a fresh shell.
 */
export function bashCall(input: unknown, limits: Pick<ToolLimits, 'defaultTimeoutMs' | 'maxTimeoutMs'> = TOOL_LIMITS): { command: string; timeout: number } {
  const { command, timeout_ms } = parseToolInput('bash', input);
  const t = timeout_ms ?? limits.defaultTimeoutMs;
  if (t > limits.maxTimeoutMs) throw new ToolError(`bash: timeout_ms ${t} is over the maximum of ${limits.maxTimeoutMs}`);
  return { command, timeout: t };
}

export type BashEnd = { kind: 'exit'; code: number } | { kind: 'signal'; signal: string } | { kind: 'timeout'; timeoutMs: number } | { kind: 'cancelled' };

/** Already capped output + the trailer: `exit code: N`, or how the command was stopped. */
export function bashTrailer(capped: string, end: BashEnd): string {
  const body = capped === '' || capped.endsWith('\n') ? capped : `${capped}\n`;
  switch (end.kind) {
    case 'timeout':
      return `${body}killed by SIGKILL after timeout of ${end.timeoutMs} ms`;
    case 'cancelled':
      return `${body}cancelled: killed by SIGKILL`;
    case 'signal':
      return `${body}killed by ${end.signal}`;
    case 'exit':
      return `${body}exit code: ${end.code}`;
  }
}

/** A command's whole output, capped, with its trailer. */
export function formatBashResult(output: string, end: BashEnd, cap = TOOL_LIMITS.outputChars): string {
  return bashTrailer(capOutput(output, cap), end);
}

/**
 * Keeps the head and the tail of a stream of text, counting the bytes dropped between, so a
 * command that prints gigabytes costs a hand no more than the cap.
 */
export class CappedOutput {
  private head = '';
  private tail = '';
  private dropped = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(cap: number) {
    this.headCap = Math.ceil(cap / 2);
    this.tailCap = Math.floor(cap / 2);
  }

  push(s: string): void {
    if (this.head.length < this.headCap) {
      const take = s.slice(0, this.headCap - this.head.length);
      this.head += take;
      s = s.slice(take.length);
    }
    if (s === '') return;
    this.tail += s;
    if (this.tail.length > this.tailCap) {
      const cut = this.tail.length - this.tailCap;
      this.dropped += new TextEncoder().encode(this.tail.slice(0, cut)).byteLength;
      this.tail = this.tail.slice(cut);
    }
  }

  text(): string {
    if (this.dropped === 0) return this.head + this.tail;
    return `${this.head}\n[output truncated: ${this.dropped} more bytes]\n${this.tail}`;
  }
}

/** Long output's head and tail, with a notice of the bytes dropped between. */
export function capOutput(text: string, cap: number): string {
  const out = new CappedOutput(cap);
  out.push(text);
  return out.text();
}

/**
 * What a command in a sandbox hand gets of its hand's environment, whichever executor runs it
 * (paddock-hand, paddock-exec): the sandbox's proxy variables, and the trust-store variables its
 * TLS-terminating proxy sets when the hand has secrets (sandbox-runtime's CA_TRUST_VARS).
 */
export const SANDBOX_PASSED_ENV = [
  'TMPDIR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'all_proxy',
  'no_proxy',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'CURL_CA_BUNDLE',
  'REQUESTS_CA_BUNDLE',
  'PIP_CERT',
  'GIT_SSL_CAINFO',
  'AWS_CA_BUNDLE',
  'CARGO_HTTP_CAINFO',
  'DENO_CERT',
  'CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE',
  'NIX_SSL_CERT_FILE',
] as const;
