// The worker's guards on every way a cell could reach a server, so that a
// refused request says in Spanish what happened (nothing was sent).
//
// They are not the wall: the worker starts from a blob: URL and so runs under
// the page's Content-Security-Policy (deckbuild.policy, workerstart.js), which
// the browser enforces on every request, including the ones these guards do
// not know about (a nested worker, import(), a font). The guards only answer
// first, and truthfully: each refusal happens before the request exists, and
// says so. A policy violation that still happens (a channel with no guard) is
// recorded, and the cell is told about it afterwards (`takeViolations`).
//
// Relative URLs resolve against the deck's folder, as on the page: a blob:
// worker has no folder of its own.

import { FOLLOW } from "../shared/protocol.js";

const NOTHING_SENT = "no se envió nada";
const OFFLINE = "las diapositivas funcionan sin conexión y solo leen archivos de su propia carpeta";

// The folder of the channel on which the class follows the lecturer (deckbuild.follow): a
// cell may neither listen to it nor publish on it, whatever address it writes for it.
const FOLLOW_SEGMENT = FOLLOW.events.split("/")[0];

let deckOrigin = "";
let deckBase = "";
const violations = [];
const refusals = [];

/** The Spanish error for a request that was refused before it existed (and a note of it). */
function refusal(message) {
  const error = new TypeError(`Bloqueado: ${message}; ${NOTHING_SENT}.`);
  refusals.push(error.message);
  return error;
}

/** The refusals since the last call (their messages). */
export function takeRefusals() {
  return refusals.splice(0, refusals.length);
}

function describeUrl(url) {
  return url instanceof URL ? url.href : String(url);
}

/** The URL a cell asked for, resolved against the deck's folder; throws the refusal if it leaves the deck's origin. */
export function checkUrl(raw) {
  let url;
  try {
    url = new URL(raw instanceof Request ? raw.url : String(raw), deckBase);
  } catch {
    // Not a URL at all: the browser's own error says so.
    return null;
  }
  if (url.origin !== deckOrigin) {
    throw refusal(`${describeUrl(url)} es de otro servidor (${OFFLINE})`);
  }
  if (isFollowChannel(url)) {
    throw refusal(`una celda no puede leer ni publicar el canal con el que la clase sigue al profesor (${url.pathname})`);
  }
  return url;
}

function isFollowChannel(url) {
  let path = url.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    /* a path that does not decode is compared as written */
  }
  return path.toLowerCase().split("/").includes(FOLLOW_SEGMENT);
}

function replace(owner, name, wrapper) {
  if (!owner || typeof owner[name] !== "function") return;
  Object.defineProperty(owner, name, { value: wrapper, writable: true, configurable: true, enumerable: false });
}

/** A constructor that refuses every call: the deck has no use for these connections. */
function refuseConstructor(scope, name, what) {
  const Native = scope[name];
  if (typeof Native !== "function") return;
  function Refused(url) {
    throw refusal(`una celda no puede abrir ${what} (${describeUrl(url)}); ${OFFLINE}`);
  }
  Refused.prototype = Native.prototype;
  replace(scope, name, Refused);
}

function guardFetch(scope) {
  const inner = scope.fetch;
  // Synchronous on purpose: `js.fetch(url)` in a cell fails on its own line
  // instead of in a promise nobody awaits.
  replace(scope, "fetch", function fetch(input, init) {
    const url = checkUrl(input);
    return inner.call(scope, url && !(input instanceof Request) ? url.href : input, init);
  });
}

function guardXhr(scope) {
  const proto = scope.XMLHttpRequest && scope.XMLHttpRequest.prototype;
  if (!proto) return;
  const nativeOpen = proto.open;
  replace(proto, "open", function open(method, url, ...rest) {
    const checked = checkUrl(url);
    return nativeOpen.call(this, method, checked ? checked.href : url, ...rest);
  });
}

function guardImportScripts(scope) {
  const nativeImport = scope.importScripts;
  replace(scope, "importScripts", function importScripts(...urls) {
    const checked = urls.map((url) => {
      const resolved = checkUrl(url);
      return resolved ? resolved.href : url;
    });
    return nativeImport.apply(scope, checked);
  });
}

function guardCache(scope) {
  const proto = scope.Cache && scope.Cache.prototype;
  if (!proto) return;
  const nativeAdd = proto.add;
  const nativeAddAll = proto.addAll;
  replace(proto, "add", function add(request) {
    checkUrl(request);
    return nativeAdd.call(this, request);
  });
  replace(proto, "addAll", function addAll(requests) {
    for (const request of requests) checkUrl(request);
    return nativeAddAll.call(this, requests);
  });
}

const CSS_URL = /url\(\s*(["']?)([^"')]*)\1\s*\)/g;

function guardFontFace(scope) {
  const Native = scope.FontFace;
  if (typeof Native !== "function") return;
  function FontFace(family, source, descriptors) {
    if (typeof source === "string") for (const match of source.matchAll(CSS_URL)) checkUrl(match[2]);
    return new Native(family, source, descriptors);
  }
  FontFace.prototype = Native.prototype;
  replace(scope, "FontFace", FontFace);
}

// A worker a cell started would outlive it and its Stop, with storage of its
// own (storagedoors.js): none is started. The native constructor stays out of
// reach: the prototype's `constructor` is the refusal too.
function guardWorkers(scope) {
  for (const name of ["Worker", "SharedWorker"]) {
    const Native = scope[name];
    if (typeof Native !== "function") continue;
    const Refused = function (url) {
      throw refusal(`una celda no puede crear otros workers (${describeUrl(url)})`);
    };
    Refused.prototype = Native.prototype;
    Object.defineProperty(Native.prototype, "constructor", { value: Refused, writable: false, configurable: false });
    replace(scope, name, Refused);
  }
}

/**
 * Records the policy's violations, to tell a cell what the browser blocked
 * (a channel with no guard) and to notice a policy that blocks the deck's own
 * files (a browser that applies it differently: the page then starts a plain worker).
 */
function watchViolations(scope) {
  scope.addEventListener("securitypolicyviolation", (event) => {
    violations.push({ directive: event.effectiveDirective || event.violatedDirective, url: event.blockedURI || "" });
  });
}

/** The violations recorded since the last call. */
export function takeViolations() {
  return violations.splice(0, violations.length);
}

/** Whether one of these violations blocked a file of the deck itself. */
export function blockedOwnFiles(recorded) {
  return recorded.some((violation) => violation.url.startsWith(deckOrigin));
}

/**
 * A Spanish sentence for what was refused after a cell's own code ended (in a
 * promise or callback it left), where no error of the cell could show it.
 */
export function describeLateRefusals(messages) {
  if (!messages.length) return "";
  const first = messages[0].replace(/^Bloqueado: /, "");
  const more = messages.length > 1 ? ` (y ${messages.length - 1} más)` : "";
  return `Después de terminar la celda, algo que dejó pendiente intentó conectarse y se bloqueó${more}: ${first}`;
}

/** A Spanish sentence for violations a cell caused, or "" if there were none. */
export function describeViolations(recorded) {
  // Only requests: a blocked eval already raised its own error in the cell.
  const requests = recorded.filter((violation) => /^[a-z][a-z0-9+.-]*:\/\//i.test(violation.url));
  if (!requests.length) return "";
  // Named by address, not counted: each policy in force (the page's <meta>,
  // and a server's header when it sends the same one) reports every attempt.
  const urls = [...new Set(requests.map((violation) => violation.url))];
  const what = urls.length === 1 ? "la conexión" : "las conexiones";
  return (
    `La política de seguridad de la página bloqueó ${what} con otro servidor ` +
    `(${urls.slice(0, 3).join(", ")}${urls.length > 3 ? ", …" : ""}): no salió nada del navegador; ${OFFLINE}.`
  );
}

/**
 * Installs the guards on the worker's global scope. `workerUrl`: the worker
 * script's own URL (js/worker.js), whose folder's parent is the deck's folder.
 */
export function installNetworkGuard(scope, workerUrl) {
  deckBase = new URL("../", workerUrl).href;
  deckOrigin = new URL(deckBase).origin;
  watchViolations(scope);
  guardFetch(scope);
  guardXhr(scope);
  guardImportScripts(scope);
  guardCache(scope);
  guardFontFace(scope);
  guardWorkers(scope);
  refuseConstructor(scope, "WebSocket", "conexiones WebSocket");
  refuseConstructor(scope, "WebSocketStream", "conexiones WebSocket");
  refuseConstructor(scope, "WebTransport", "conexiones WebTransport");
  refuseConstructor(scope, "EventSource", "conexiones EventSource");
}
