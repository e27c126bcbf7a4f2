/**
 * The largest request body Next's proxy layer may hold. Next copies every body of a request the
 * proxy runs on into memory (up to `proxyClientMaxBodySize`, 10 MB by default) before any handler,
 * or anyone, knows the caller. The two APIs bypass the proxy and cap their bodies as they stream;
 * what still passes through it (pages, sign-out) sends small bodies or none.
 */
export const PROXY_MAX_BODY_BYTES = 64 * 1024;

/**
 * The largest body read before the caller is known to be someone (an owner, a key, a share
 * viewer, a widget visitor): what a stranger may send (opening a widget) is small, and a stranger
 * must not make the server hold PADDOCK_MAX_BODY_BYTES per connection.
 */
export const ANONYMOUS_MAX_BODY_BYTES = 64 * 1024;
