// What a cell could keep for a later visit, or say to the page outside the
// protocol, taken away before any cell runs: the deck's storage belongs to
// the worker alone.
//
// The network's doors are closed by the page's policy (netguard.js explains
// them); storage has no policy. Whatever a cell writes where the deck or the
// browser looks on the next visit (Cache Storage, which the service worker
// serves pages from; the origin's private file system, where the worker keeps
// its copies of Python; IndexedDB) would outlive the cell, so the worker takes
// those objects for itself (devicestore.js's `openDeviceStore`, at its start)
// and then removes every way to them from what code in a cell can reach
// (`closeStorageDoors`, before the first cell): the accessors on the global
// scope's prototypes (`caches`, `indexedDB`, `navigator.storage`) and
// `BroadcastChannel`. A nested worker would come with fresh ones: netguard.js
// refuses them, its prototype's `constructor` included. The global scope's
// `postMessage` to the page goes too: the protocol runs over a port only the
// worker holds (python.js, worker.js), and nothing else reaches the page.
//
// Nothing here is a promise the browser keeps, as the policy is: it relies on
// a cell reaching JavaScript only through the global scope. Every object a
// cell could reach them from is listed here, and the tests try each door
// (tests/browser/test_storage_doors.py). The service worker still checks
// every stored file against the build, whoever wrote it.

const NOTHING_KEPT = "las celdas no guardan nada en el navegador: sus ediciones y salidas las guarda la página";

// The methods of what each door held (CacheStorage, IDBFactory, StorageManager), each refused.
const CACHE_STORAGE_METHODS = ["open", "has", "delete", "keys", "match"];
const IDB_FACTORY_METHODS = ["open", "deleteDatabase", "databases", "cmp"];
const STORAGE_MANAGER_METHODS = ["getDirectory", "estimate", "persist", "persisted"];

/** The Spanish error a cell gets at a closed door, as netguard.js's: nothing happened. */
function refusal(what) {
  return new TypeError(`Bloqueado: ${what}; ${NOTHING_KEPT}.`);
}

/** Every object from `object` up its prototype chain (but Object.prototype). */
function chainOf(object) {
  const chain = [];
  for (let link = object; link && link !== Object.prototype; link = Object.getPrototypeOf(link)) chain.push(link);
  return chain;
}

/**
 * What a cell finds at a closed door: in place of a function, one that
 * refuses; in place of an object, one whose `methods` (the interface's own)
 * each refuse. The refusal comes when the cell uses the door (`js.caches.keys()`
 * says what happened instead of «no attribute»). Not a getter that throws:
 * in Chromium the first such get through a fresh proxy of the global scope
 * (`js.self.caches`) sometimes reached the cell as «SystemError: error return
 * without exception set», where a refused call arrives whole.
 */
function standIn(what, methods = null) {
  const refused = function refused() {
    throw refusal(what);
  };
  if (!methods) return refused;
  // An ordinary object: `print(js.caches)` in a cell shows it, as it showed the real one.
  const object = {};
  for (const method of methods) object[method] = refused;
  return Object.freeze(object);
}

/** `name` removed wherever it is defined along `object`'s prototype chain, and `door` in its place on `object`. */
function closeDoor(object, name, door) {
  for (const link of chainOf(object)) {
    const descriptor = Object.getOwnPropertyDescriptor(link, name);
    if (descriptor && descriptor.configurable) delete link[name];
  }
  Object.defineProperty(object, name, { value: door, writable: false, configurable: true, enumerable: false });
}

/** A constructor that refuses every call in place of `name`, and its prototype's `constructor` too. */
function refuseConstructor(scope, name, what) {
  const Native = scope[name];
  if (typeof Native !== "function") return;
  function Refused() {
    throw refusal(what);
  }
  Refused.prototype = Native.prototype;
  Object.defineProperty(Native.prototype, "constructor", { value: Refused, writable: false, configurable: false });
  Object.defineProperty(scope, name, { value: Refused, writable: true, configurable: true, enumerable: false });
}

/**
 * Takes away from code that runs later every door to the device's storage and
 * to the page outside the protocol (see the top of this file). Call after
 * the worker has opened its device store (state.js), once it holds its own
 * port to the page, before the first cell.
 */
export function closeStorageDoors(scope) {
  closeDoor(scope, "caches", standIn("una celda no puede usar la caché del navegador (caches)", CACHE_STORAGE_METHODS));
  closeDoor(scope, "indexedDB", standIn("una celda no puede usar la base de datos del navegador (indexedDB)", IDB_FACTORY_METHODS));
  if (scope.navigator) {
    closeDoor(
      scope.navigator,
      "storage",
      standIn("una celda no puede usar el almacenamiento del navegador (navigator.storage)", STORAGE_MANAGER_METHODS),
    );
  }
  closeDoor(scope, "postMessage", standIn("una celda no puede enviar mensajes a la página (postMessage)"));
  refuseConstructor(scope, "BroadcastChannel", "una celda no puede abrir canales con otras páginas (BroadcastChannel)");
}
