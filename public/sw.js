// Paddock's service worker: keeps the app readable offline. Pages are network-first (a fresh copy
// is cached on every visit), build assets cache-first (their names are content hashes). The API
// is never cached: data comes from the IndexedDB mirror.
const PAGES = 'paddock-pages-v1';
const ASSETS = 'paddock-assets-v1';

// The session list is cached up front: it is the page people open first when offline.
self.addEventListener('install', (event) => {
  self.skipWaiting();
  event.waitUntil(cacheIfOwn('/').catch(() => undefined));
});
// A page answered with a redirect is the sign-in page, not the page asked for: never kept under its name.
async function cacheIfOwn(url) {
  const res = await fetch(url);
  if (res.ok && !res.redirected) await (await caches.open(PAGES)).put(url, res);
}

self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (url.origin !== self.location.origin || url.pathname.startsWith('/api/')) return;

  if (url.pathname.startsWith('/_next/static/')) {
    event.respondWith(
      caches.open(ASSETS).then(async (cache) => {
        const hit = await cache.match(req);
        if (hit) return hit;
        const res = await fetch(req);
        if (res.ok) cache.put(req, res.clone());
        return res;
      }),
    );
    return;
  }

  if (req.mode === 'navigate' || url.pathname.startsWith('/_next/')) {
    event.respondWith(
      fetch(req)
        .then((res) => {
          if (res.ok && !res.redirected) {
            const copy = res.clone();
            caches.open(PAGES).then((cache) => cache.put(req, copy));
          }
          return res;
        })
        .catch(async () => {
          const cache = await caches.open(PAGES);
          return (await cache.match(req, { ignoreSearch: true })) ?? (await cache.match('/')) ?? Response.error();
        }),
    );
  }
});
