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
// Every stored response is checked against the build's SHA-256 each time it
// is used, at install and on every fetch, not only when it was stored: any
// page or worker of this origin can write to Cache Storage (the deck's cells
// cannot: worker/storagedoors.js), and a stored page is served without asking
// the server. One that is not the build's file is deleted and fetched again;
// the page is told (offline.js says so in one line). With no network, a page
// that fails its check is never served: a short page says why instead.
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
  REPLACED: "offline-replaced",
});

// What a visit gets, instead of a stored page that failed its check, when the
// network cannot give the build's own. No script, no style, nothing loaded.
const UNVERIFIED_PAGE = `<!doctype html>
<html lang="es"><meta charset="utf-8"><title>Diapositivas no disponibles sin conexión</title>
<h1>Diapositivas no disponibles sin conexión</h1>
<p>La copia de las diapositivas guardada en este navegador no coincidía con la versión publicada y se
descartó. Vuelve a abrirlas cuando haya conexión con el servidor.</p></html>
`;
const UNVERIFIED_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "Content-Security-Policy": "default-src 'none'",
  "Cache-Control": "no-store",
};

// The files this worker deleted since it started because they were not the build's.
const replaced = new Set();

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

/** Whether a response's body is the build's `path` (its SHA-256); reads a clone, the response stays whole. */
async function isBuildFile(response, path) {
  try {
    return (await sha256(response.clone())) === FILES.get(path).sha256;
  } catch {
    return false;
  }
}

/**
 * The stored response for `path`, if it is the build's file; one that is not
 * is deleted (and the pages are told). Null when there is none to use.
 */
async function storedFile(cache, path) {
  const cached = await cache.match(urlOf(path));
  if (!cached) return null;
  if (await isBuildFile(cached, path)) return cached;
  await cache.delete(urlOf(path));
  replaced.add(path);
  console.warn(`dpdeck: la copia guardada de ${path} no era la de esta versión; se descartó`);
  tellPages();
  return null;
}

/** Every page of the deck hears which stored files were replaced (offline.js shows one line). */
async function tellPages() {
  const message = { type: MESSAGE.REPLACED, paths: [...replaced] };
  for (const client of await self.clients.matchAll({ type: "window", includeUncontrolled: true })) {
    client.postMessage(message);
  }
}

// A page opening exists as a client a moment after its response starts.
const NEW_PAGE_WAIT_MS = 5000;
const NEW_PAGE_POLL_MS = 50;

async function tellNewPage(clientId) {
  for (let waited = 0; clientId && waited < NEW_PAGE_WAIT_MS; waited += NEW_PAGE_POLL_MS) {
    const client = await self.clients.get(clientId);
    if (client) {
      client.postMessage({ type: MESSAGE.REPLACED, paths: [...replaced] });
      return;
    }
    await new Promise((done) => setTimeout(done, NEW_PAGE_POLL_MS));
  }
}

/** The file from the network, checked against the build's SHA-256; stored as it came. */
async function fetchAndStore(cache, path) {
  const response = await fetch(urlOf(path), { cache: "no-cache" });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  const actual = await sha256(response.clone());
  if (actual !== FILES.get(path).sha256) throw new Error(`${path}: no es el de esta versión del mazo`);
  await cache.put(urlOf(path), response);
}

/** Stores every file of `group` not stored yet, or stored but not the build's (checked now, each one). */
async function storeGroup(group) {
  const cache = await caches.open(CACHE_NAME);
  const stored = new Set((await cache.keys()).map((request) => request.url));
  const missing = [];
  for (const path of Object.keys(PRECACHE[group])) {
    if (!stored.has(urlOf(path)) || !(await storedFile(cache, path))) missing.push(path);
  }
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

/** How much of each group is stored, and what was replaced: {build, page: {stored, total}, python: {…}, replaced}. */
async function describe() {
  const cache = await caches.open(CACHE_NAME);
  const stored = new Set((await cache.keys()).map((request) => request.url));
  const count = (group) => {
    const paths = Object.keys(PRECACHE[group]);
    return { stored: paths.filter((path) => stored.has(urlOf(path))).length, total: paths.length };
  };
  return { build: PRECACHE.build, page: count("page"), python: count("python"), replaced: [...replaced] };
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

/**
 * A file of the build: from the cache as stored if it is still the build's,
 * or from the network (then stored, checked). A page whose stored copy failed
 * its check and that the network cannot give is a short page saying so.
 */
async function respond(request, path) {
  const cache = await caches.open(CACHE_NAME);
  const cached = await storedFile(cache, path);
  if (cached) return cached;
  let response;
  try {
    response = await fetch(request);
  } catch (error) {
    if (request.mode === "navigate" && replaced.has(path)) {
      return new Response(UNVERIFIED_PAGE, { status: 503, headers: UNVERIFIED_HEADERS });
    }
    throw error;
  }
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
    const response = respond(request, INDEX);
    event.respondWith(response);
    // The page being opened did not exist when a stored copy was replaced: it is told once it does.
    event.waitUntil(response.then(() => replaced.size && tellNewPage(event.resultingClientId), () => {}));
    return;
  }
  if (!FILES.has(path) || new URL(request.url).search) return;
  event.respondWith(respond(request, path));
});
