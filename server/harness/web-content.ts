import 'server-only';
import TurndownService from 'turndown';

/**
 * A fetched body as text for the model: HTML as Markdown (turndown; scripts, styles and the like
 * dropped, links made absolute so they can be fetched as written), text, JSON and XML as they are,
 * anything else described by its type and size, never its bytes.
 */

export interface WebContent {
  /** What the model reads. */
  text: string;
  /** The page's `<title>`, for HTML. */
  title?: string;
  kind: 'html' | 'text' | 'binary';
}

const TEXT_TYPES = /^(text\/[^;]+|application\/(json|[^;]+\+json|xml|[^;]+\+xml|javascript|ecmascript|x-javascript|x-yaml|yaml|toml|x-sh|sql|graphql|ld\+json))$/;

/** The media type (lower case) and charset of a Content-Type header. */
export function mediaTypeOf(contentType: string | undefined): { type: string | null; charset: string | null } {
  if (!contentType) return { type: null, charset: null };
  const [type, ...params] = contentType.split(';').map((p) => p.trim());
  const charset = params.map((p) => /^charset\s*=\s*"?([^";]+)"?$/i.exec(p)?.[1]).find(Boolean) ?? null;
  return { type: type ? type.toLowerCase() : null, charset };
}

function decode(body: Buffer, charset: string | null): string {
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    // An unknown label: UTF-8 is the web's default.
    return new TextDecoder('utf-8').decode(body);
  }
}

/** Untyped content counts as text when its start has no NUL byte and decodes as UTF-8. */
function looksLikeText(body: Buffer): boolean {
  const head = body.subarray(0, 4096);
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, Math.max(0, head.length - 4)));
    return true;
  } catch {
    return false;
  }
}

function turndownFor(base: URL): TurndownService {
  const t = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  t.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'head', 'title', 'canvas']);
  t.remove((node) => node.nodeName.toLowerCase() === 'svg');
  const absolute = (href: string) => {
    try {
      return new URL(href, base).href;
    } catch {
      return href;
    }
  };
  t.addRule('absolute-links', {
    filter: (node) => node.nodeName === 'A' && Boolean(node.getAttribute('href')),
    replacement: (content, node) => {
      const href = (node).getAttribute('href') ?? '';
      if (/^\s*javascript:/i.test(href)) return content;
      const text = content.trim();
      return text ? `[${text}](${absolute(href)})` : '';
    },
  });
  t.addRule('images-as-alt', {
    filter: 'img',
    replacement: (_content, node) => {
      const alt = (node).getAttribute('alt')?.trim();
      return alt ? `[image: ${alt}]` : '';
    },
  });
  return t;
}

function titleOf(html: string, t: TurndownService): string | undefined {
  const m = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  const title = m ? t.turndown(m[1]!).replace(/\s+/g, ' ').trim() : '';
  return title || undefined;
}

/** Whether a body of this Content-Type is worth reading (text of some kind, or untyped: sniffed). */
export function isTextual(contentType: string | undefined): boolean {
  const { type } = mediaTypeOf(contentType);
  return type === null || type === 'text/html' || type === 'application/xhtml+xml' || TEXT_TYPES.test(type);
}

/**
 * A body (already capped by the reader) as text for the model. `size` is what the server said the
 * body is (a binary body is described by it, never shown, and not read: null when not said).
 */
export function webContent(body: Buffer, contentType: string | undefined, url: URL, size: number | null = body.length): WebContent {
  const { type, charset } = mediaTypeOf(contentType);
  if (type === 'text/html' || type === 'application/xhtml+xml') {
    const html = decode(body, charset);
    const t = turndownFor(url);
    const title = titleOf(html, t);
    return { kind: 'html', text: t.turndown(html).replace(/\n{3,}/g, '\n\n').trim(), ...(title ? { title } : {}) };
  }
  if ((type !== null && TEXT_TYPES.test(type)) || (type === null && looksLikeText(body))) return { kind: 'text', text: decode(body, charset) };
  const of = size === null ? 'of unstated size' : `of ${size} bytes`;
  return { kind: 'binary', text: `[${type ?? 'untyped'} content ${of}, not shown: web_fetch returns text (HTML, text, JSON, XML) only]` };
}
