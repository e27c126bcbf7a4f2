import 'server-only';
import { type StoredEvent, describeZodError } from '~/lib/events';
import { ToolError } from '~/lib/hand';
import type { NetworkPolicy } from '~/lib/network-policy';
import { WebFetchInput } from '~/lib/tool-inputs';
import type { ToolConfig } from '~/lib/toolset';
import { restrictsUrls, urlSourceOf, urlSourcesRefusal } from '~/lib/url-sources';
import { checkNetworkPolicy, checkToolDomains, hostOf, parseFetchUrl, truncateContent } from '~/lib/web-fetch-rules';
import { type PinnedResponse, type Resolve, checkedAddress, isRedirect, pinnedGet, systemResolve } from '~/server/harness/pinned-get';
import { isTextual, webContent } from '~/server/harness/web-content';
import { logger } from '~/server/log';

/**
 * The `web_fetch` tool, run by the harness (whatever hand the session has, or none). A URL is
 * fetched only if every rule lets it: http(s); its provenance (`url_sources`); the tool's own
 * `allowed_domains`/`blocked_domains`; the session's network policy (the hosts its sandbox hands
 * may reach); and the address check against private networks (pinned-get.ts). Redirects are
 * followed here, each hop checked the same way. Every failure is a `ToolError`: a result the model
 * reads, never a harness fault.
 */

const log = logger('web_fetch');

export const MAX_REDIRECTS = 5;
export const FETCH_TIMEOUT_MS = 30_000;
export const MAX_BODY_BYTES = 5 * 1024 * 1024;
/** How much of an error page the model is shown. */
const ERROR_EXCERPT_CHARS = 2_000;

export interface WebFetchOptions {
  /** The agent's web_fetch config (domains, max_content_tokens, url_sources). */
  config: ToolConfig | null;
  /** The session's network policy (`HandRegistry.networkPolicy`). */
  network: NetworkPolicy;
  /** The session's log up to the call: where `url_sources` look for the URL. */
  events: readonly StoredEvent[];
  /** The call's own seq: only what came before it counts as a source. */
  callSeq: number;
  /** The call's signal: an interrupt ends the fetch. */
  signal: AbortSignal;
  resolve?: Resolve;
  timeoutMs?: number;
  maxBodyBytes?: number;
}

function networkError(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return err.code ? `${err.code}${err.message && !err.message.includes(err.code) ? ` (${err.message})` : ''}` : String(err.message ?? e);
}

const sizeText = (n: number) => (n >= 1024 * 1024 ? `${Math.round(n / (1024 * 1024))} MB` : `${n} bytes`);

function header(url: URL, res: PinnedResponse, requested: string): string[] {
  const contentType = res.headers['content-type'];
  return [
    `URL: ${url.href}`,
    `Status: ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`,
    ...(contentType ? [`Content-Type: ${contentType}`] : []),
    ...(url.href !== requested ? [`Redirected from: ${requested}`] : []),
  ];
}

/** Fetches the call's URL and returns the result text (final URL and status first), or throws a ToolError. */
export async function webFetch(input: unknown, o: WebFetchOptions): Promise<string> {
  const parsed = WebFetchInput.safeParse(input);
  if (!parsed.success) throw new ToolError(`web_fetch: invalid input: ${describeZodError(parsed.error)}`);
  const requested = parsed.data.url;
  let url = parseFetchUrl(requested);
  const sources = o.config?.url_sources ?? null;
  if (restrictsUrls(sources) && urlSourceOf(sources, requested, o.events, o.callSeq) === null) {
    throw new ToolError(`web_fetch: refused ${requested}: ${urlSourcesRefusal(sources)}`);
  }
  const timeoutMs = o.timeoutMs ?? FETCH_TIMEOUT_MS;
  const maxBytes = o.maxBodyBytes ?? MAX_BODY_BYTES;
  const signal = AbortSignal.any([o.signal, AbortSignal.timeout(timeoutMs)]);
  const t0 = performance.now();
  for (let redirects = 0; ; redirects++) {
    const host = hostOf(url);
    checkToolDomains(o.config, host);
    const { explicit } = checkNetworkPolicy(o.network, url);
    const to = await checkedAddress(host, explicit, o.resolve ?? systemResolve);
    let res: PinnedResponse;
    try {
      res = await pinnedGet(url, to, { signal, maxBytes, wantsBody: (h) => isTextual(h['content-type']) });
    } catch (e) {
      // The call was cancelled (an interrupt): the harness's to handle, not a failed fetch.
      if (o.signal.aborted) throw e;
      if (signal.aborted) throw new ToolError(`web_fetch: ${url.href} did not answer within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}`);
      throw new ToolError(`web_fetch: could not fetch ${url.href}: ${networkError(e)}`);
    }
    if (isRedirect(res.status) && typeof res.headers.location === 'string') {
      if (redirects >= MAX_REDIRECTS) throw new ToolError(`web_fetch: ${requested} redirected more than ${MAX_REDIRECTS} times (last to ${res.headers.location})`);
      let next: string;
      try {
        next = new URL(res.headers.location, url).href;
      } catch {
        throw new ToolError(`web_fetch: ${url.href} redirected to an invalid location: ${JSON.stringify(res.headers.location.slice(0, 200))}`);
      }
      url = parseFetchUrl(next);
      continue;
    }
    log.debug('fetched', { host, status: res.status, redirects, bytes: res.body.length, ms: Math.round(performance.now() - t0) });
    const declared = Number(res.headers['content-length']);
    const read = isTextual(res.headers['content-type']);
    const size = res.headers['content-length'] !== undefined && Number.isFinite(declared) && declared >= 0 ? declared : read ? res.body.length : null;
    const content = webContent(res.body, res.headers['content-type'], url, size);
    const head = header(url, res, requested);
    if (res.status < 200 || res.status > 299) {
      const excerpt = content.kind === 'binary' ? content.text : content.text.slice(0, ERROR_EXCERPT_CHARS);
      throw new ToolError([`web_fetch: the server answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, ...head, '', excerpt].join('\n').trim());
    }
    const notes = res.capped ? [`[the body is longer than ${sizeText(maxBytes)}: only that much was read]`] : [];
    const title = content.title ? [`Title: ${content.title}`] : [];
    const text = content.kind === 'binary' ? content.text : truncateContent(content.text, o.config?.max_content_tokens);
    return [...head, ...title, '', text, ...notes].join('\n');
  }
}
