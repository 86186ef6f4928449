// The deck's service worker (dist/sw.js): after one visit the deck opens,
// moves and runs Python with the network gone.
//
// The build writes in front of this script the build's own file list
// (py/deckbuild/offline.py): self.DPDECK_PRECACHE = {build, page: {path: sha256},
// python: {path: sha256}}. So every build is a new sw.js, which the browser
// installs beside the old one:
//
// * install: the page's files (everything but Python) go into a new cache,
//   `dpdeck-<build>`, each checked against its SHA-256: a server half-way
//   through a new upload never gives a cache that mixes two builds. Python's
//   files (about 27 MB) are cached only once Python has been used on this
//   device: when the page says so after a boot, or at install if the cache it
//   replaces already held them. A person who chose not to download Python
//   never fetches them through here.
// * activate: caches of other builds are deleted. A new version waits until
//   the page asks it to take over (its «Actualizar» button), so a page is
//   never served files of two builds.
// * fetch: cache first, and a cached response is returned as it was stored —
//   never rebuilt: Chromium keeps the compiled WebAssembly only for responses
//   from the Cache API or the HTTP cache, and a stored response keeps the
//   headers it came with (COOP/COEP: an isolated deck stays isolated offline).
//   Nothing is ever added to a response. A file of the build that is not in
//   the cache yet comes from the network and, checked, goes into it.
//
// Only this deck's own files are handled; any other request is left to the
// browser. The script obeys the page's policy: it fetches its own origin only,
// evaluates no code and imports nothing.

const PRECACHE = self.DPDECK_PRECACHE;
const CACHE_PREFIX = "dpdeck-";
const CACHE_NAME = `${CACHE_PREFIX}${PRECACHE.build}`;
const INDEX = "index.html";

/** Messages between the page (offline.js) and this worker. */
const MESSAGE = Object.freeze({
  STATUS: "offline-status",
  CACHE_PYTHON: "cache-python",
  TAKE_OVER: "take-over",
});

const scope = () => self.registration.scope;
const urlOf = (path) => new URL(path, scope()).href;

// Every file of the build by its URL (no query): its SHA-256 and its group.
const FILES = new Map();
for (const group of ["page", "python"]) {
  for (const [path, sha256] of Object.entries(PRECACHE[group])) FILES.set(path, { sha256, group });
}

function pathOf(url) {
  const { origin, pathname } = new URL(url);
  const base = new URL(scope());
  if (origin !== base.origin || !pathname.startsWith(base.pathname)) return null;
  const path = decodeURIComponent(pathname.slice(base.pathname.length));
  return path === "" ? INDEX : path;
}

async function sha256(response) {
  const digest = await crypto.subtle.digest("SHA-256", await response.arrayBuffer());
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The file from the network, checked against the build's SHA-256; stored as it came. */
async function fetchAndStore(cache, path) {
  const response = await fetch(urlOf(path), { cache: "no-cache" });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  const actual = await sha256(response.clone());
  if (actual !== FILES.get(path).sha256) throw new Error(`${path}: no es el de esta versión del mazo`);
  await cache.put(urlOf(path), response);
}

/** Stores every file of `group` not stored yet. */
async function storeGroup(group) {
  const cache = await caches.open(CACHE_NAME);
  const stored = new Set((await cache.keys()).map((request) => request.url));
  const missing = Object.keys(PRECACHE[group]).filter((path) => !stored.has(urlOf(path)));
  // A few at a time: the page may be busy with its own downloads.
  for (let start = 0; start < missing.length; start += 6) {
    await Promise.all(missing.slice(start, start + 6).map((path) => fetchAndStore(cache, path)));
  }
}

/** Whether an older build's cache held Python's files: then this one keeps them too. */
async function pythonWasUsed() {
  const paths = Object.keys(PRECACHE.python);
  // The interpreter, the one file every boot needs.
  const probe = paths.find((path) => path.endsWith(".wasm")) || paths[0];
  if (!probe) return false;
  for (const key of await caches.keys()) {
    if (!key.startsWith(CACHE_PREFIX)) continue;
    const requests = await (await caches.open(key)).keys();
    if (requests.some((request) => request.url.endsWith(`/${probe}`))) return true;
  }
  return false;
}

/** How much of each group is stored: {build, page: {stored, total}, python: {stored, total}}. */
async function describe() {
  const cache = await caches.open(CACHE_NAME);
  const stored = new Set((await cache.keys()).map((request) => request.url));
  const count = (group) => {
    const paths = Object.keys(PRECACHE[group]);
    return { stored: paths.filter((path) => stored.has(urlOf(path))).length, total: paths.length };
  };
  return { build: PRECACHE.build, page: count("page"), python: count("python") };
}

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const withPython = await pythonWasUsed();
      await storeGroup("page");
      if (withPython) await storeGroup("python");
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) {
        if (key.startsWith(CACHE_PREFIX) && key !== CACHE_NAME) await caches.delete(key);
      }
    })(),
  );
});

self.addEventListener("message", (event) => {
  const type = event.data && event.data.type;
  const reply = async () => event.source && event.source.postMessage({ type: MESSAGE.STATUS, ...(await describe()) });
  if (type === MESSAGE.TAKE_OVER) {
    event.waitUntil(self.skipWaiting());
  } else if (type === MESSAGE.CACHE_PYTHON) {
    event.waitUntil(
      storeGroup("python").then(reply, (error) => {
        console.warn("dpdeck: Python no quedó guardado para usarse sin conexión:", error.message);
        return reply();
      }),
    );
  } else if (type === MESSAGE.STATUS) {
    event.waitUntil(reply());
  }
});

/** A file of the build: from the cache as stored, or from the network (then stored, checked). */
async function respond(request, path) {
  const cache = await caches.open(CACHE_NAME);
  const cached = await cache.match(urlOf(path));
  if (cached) return cached;
  const response = await fetch(request);
  if (response.ok && response.type === "basic" && !response.redirected) {
    const stored = response.clone();
    const checked = response.clone();
    sha256(checked).then((actual) => {
      if (actual === FILES.get(path).sha256) cache.put(urlOf(path), stored);
    }, () => {});
  }
  return response;
}

self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET" || request.headers.has("range")) return;
  const path = pathOf(request.url);
  if (path === null) return;
  // Every view of the deck (any query, any slide) is its index.html.
  if (request.mode === "navigate") {
    if (path !== INDEX) return;
    event.respondWith(respond(request, INDEX));
    return;
  }
  if (!FILES.has(path) || new URL(request.url).search) return;
  event.respondWith(respond(request, path));
});
