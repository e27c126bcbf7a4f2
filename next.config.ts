import type { NextConfig } from 'next';
import { PROXY_MAX_BODY_BYTES } from './lib/body-limits';

const config: NextConfig = {
  reactStrictMode: true,
  // Native module: loaded by Node at run time, never bundled.
  serverExternalPackages: ['better-sqlite3'],
  allowedDevOrigins: ['127.0.0.1'],
  poweredByHeader: false,
  experimental: {
    // Next holds a copy of each body the proxy runs on (10 MB by default) before anyone is known;
    // proxy.ts refuses a larger one, or one of unknown length, so none is ever cut short.
    proxyClientMaxBodySize: PROXY_MAX_BODY_BYTES,
  },
  // Type checking is its own step (`npm test` runs `tsc --noEmit` over everything, tests
  // included); the build does not repeat it.
  typescript: { ignoreBuildErrors: true },
  // Cross-origin isolation only where the WebContainer runs (the session IDE). Share links, the
  // embed widget and the API must stay linkable and frameable, so they never get these headers.
  headers() {
    return Promise.resolve([
      // The browser hand's Web Worker is a static chunk: under the session page's COEP, a worker
      // script must itself carry COEP (and CORP) or Chromium refuses to start it.
      {
        source: '/_next/static/:path*',
        headers: [
          { key: 'Cross-Origin-Embedder-Policy', value: 'require-corp' },
          { key: 'Cross-Origin-Resource-Policy', value: 'same-origin' },
        ],
      },
      // A share link's token is in its address: never sent on in a Referer, never indexed.
      {
        source: '/share/:path*',
        headers: [
          { key: 'Referrer-Policy', value: 'no-referrer' },
          { key: 'X-Robots-Tag', value: 'noindex, nofollow' },
        ],
      },
      // The docs widget's frame: never indexed, no Referer (its address names the host site).
      {
        source: '/embed/:path*',
        headers: [
          { key: 'Referrer-Policy', value: 'no-referrer' },
          { key: 'X-Robots-Tag', value: 'noindex, nofollow' },
        ],
      },
      {
        source: '/s/:path*',
        headers: [
          { key: 'Cross-Origin-Opener-Policy', value: 'same-origin' },
          { key: 'Cross-Origin-Embedder-Policy', value: 'require-corp' },
        ],
      },
    ]);
  },
  turbopack: {
    resolveAlias: {
      // Next's browser zlib polyfill lacks `constants`: just-bash's gzip needs them (offline engine).
      'next/dist/compiled/browserify-zlib': { browser: './lib/browser/shims/zlib.ts' },
    },
  },
};

export default config;
