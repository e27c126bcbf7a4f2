/**
 * The largest request body Next's proxy layer may hold. Next copies every body of a request the
 * proxy runs on into memory (up to `proxyClientMaxBodySize`, 10 MB by default) before any handler,
 * or anyone, knows the caller. The two APIs bypass the proxy and cap their bodies as they stream;
 * what still passes through it (pages, sign-out) sends small bodies or none.
 */
export const PROXY_MAX_BODY_BYTES = 64 * 1024;
