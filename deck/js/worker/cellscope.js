// What one cell leaves behind in the worker's JavaScript world, undone before
// the next cell can see it.
//
// Python's side is dpdeck.cellrun's (module globals, asyncio tasks). Here, the
// worker's global scope: a cell reaches it through `js` and can leave behind
// timers (`js.setTimeout`, `setInterval`, `requestAnimationFrame`), listeners
// on the worker's global (`js.self.addEventListener`), or changed globals
// (`js.self.onmessage = …`, `js.self.setTimeout = …`). When a cell ends, its
// timers are cancelled and its listeners removed; when a cell starts (and
// ends), the global scope and its prototype chain are put back as they were
// when Python became ready, so a callback that still ran in between (a
// promise, a message port) cannot change what the next cell sees.
//
// The worker's own machinery never depends on what a cell can change: it
// keeps the native functions it uses (`natives`), takes its messages through
// a listener a cell cannot reach, and `close()` is refused.

/** The native functions the worker itself uses, taken before any cell runs. */
export const natives = Object.freeze({
  setTimeout: self.setTimeout.bind(self),
  clearTimeout: self.clearTimeout.bind(self),
  postMessage: self.postMessage.bind(self),
  addEventListener: self.addEventListener.bind(self),
});

const CLOSE_MESSAGE =
  "Una celda no puede cerrar Python: el resto de las diapositivas lo necesita. " +
  "Para empezar de cero, usa «Reiniciar Python».";

// Global functions that schedule a callback, each with the function that cancels it.
const SCHEDULERS = [
  ["setTimeout", "clearTimeout"],
  ["setInterval", "clearInterval"],
  ["requestAnimationFrame", "cancelAnimationFrame"],
];

/** Every object from the global scope up its prototype chain (self, DedicatedWorkerGlobalScope.prototype, …). */
function globalChain(scope) {
  const chain = [];
  for (let object = scope; object && object !== Object.prototype; object = Object.getPrototypeOf(object)) {
    chain.push(object);
  }
  return chain;
}

function sameDescriptor(a, b) {
  return (
    Object.is(a.value, b.value) &&
    a.get === b.get &&
    a.set === b.set &&
    a.writable === b.writable &&
    a.enumerable === b.enumerable &&
    a.configurable === b.configurable
  );
}

export class CellScope {
  constructor(scope) {
    this.scope = scope;
    this.pending = new Map(); // cancel function name → ids scheduled through the global
    this.listeners = []; // [type, listener, options] added through the global
    this.snapshot = null;
  }

  /**
   * From now on, timers and listeners that code adds through the global scope
   * are recorded, and the global scope as it is now is the one every cell
   * starts from. Called once, when Python is ready (Pyodide's own boot has no
   * timer left by then).
   */
  install() {
    const scope = this.scope;
    refuseClose(scope);
    for (const [schedule, cancel] of SCHEDULERS) {
      const nativeSchedule = scope[schedule];
      const nativeCancel = scope[cancel];
      if (typeof nativeSchedule !== "function" || typeof nativeCancel !== "function") continue;
      const ids = new Set();
      this.pending.set(cancel, { ids, nativeCancel: nativeCancel.bind(scope) });
      scope[schedule] = function scheduled(callback, ...rest) {
        const id = nativeSchedule.call(scope, callback, ...rest);
        ids.add(id);
        return id;
      };
      scope[cancel] = function cancelled(id) {
        ids.delete(id);
        return nativeCancel.call(scope, id);
      };
    }
    const nativeAdd = scope.addEventListener;
    const nativeRemove = scope.removeEventListener;
    const listeners = this.listeners;
    scope.addEventListener = function addEventListener(type, listener, options) {
      listeners.push([type, listener, options]);
      return nativeAdd.call(scope, type, listener, options);
    };
    this.nativeRemove = nativeRemove.bind(scope);
    // Uncaught errors of callbacks left by a cell do not mean Python broke:
    // they stay in the console instead of reaching the page as a crash.
    natives.addEventListener("error", (event) => event.preventDefault());
    this.snapshot = globalChain(scope).map((object) => [object, Object.getOwnPropertyDescriptors(object)]);
    // Event handler attributes (`self.onmessage = …`) change a value behind a
    // setter, not a property: they are kept by value.
    this.handlers = [];
    for (const [, descriptors] of this.snapshot) {
      for (const key of Object.keys(descriptors)) {
        if (key.startsWith("on") && descriptors[key].set) this.handlers.push([key, scope[key]]);
      }
    }
  }

  /** Before a cell: the global scope as it was when Python became ready. */
  begin() {
    this.cancelLeftovers();
    this.restoreGlobals();
  }

  /** After a cell: its timers cancelled, its listeners removed, the global scope put back. */
  end() {
    this.cancelLeftovers();
    this.restoreGlobals();
  }

  cancelLeftovers() {
    for (const { ids, nativeCancel } of this.pending.values()) {
      for (const id of ids) nativeCancel(id);
      ids.clear();
    }
    for (const [type, listener, options] of this.listeners.splice(0)) {
      this.nativeRemove(type, listener, options);
    }
  }

  restoreGlobals() {
    if (!this.snapshot) return;
    for (const [key, value] of this.handlers) {
      if (this.scope[key] !== value) this.scope[key] = value;
    }
    for (const [object, saved] of this.snapshot) {
      for (const key of Reflect.ownKeys(object)) {
        if (!(key in saved)) {
          const added = Object.getOwnPropertyDescriptor(object, key);
          if (added && added.configurable) delete object[key];
        }
      }
      for (const key of Reflect.ownKeys(saved)) {
        const now = Object.getOwnPropertyDescriptor(object, key);
        if (now && sameDescriptor(now, saved[key])) continue;
        if (now && !now.configurable) continue;
        try {
          Object.defineProperty(object, key, saved[key]);
        } catch {
          // A property the cell made non-configurable stays: nothing else can be done.
        }
      }
    }
  }
}

/** `close()` would end Python silently: a cell gets a Spanish error instead, and nothing can undo that. */
function refuseClose(scope) {
  Object.defineProperty(scope, "close", {
    value: function close() {
      throw new Error(CLOSE_MESSAGE);
    },
    writable: false,
    configurable: false,
    enumerable: true,
  });
}
