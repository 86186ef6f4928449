// Python's table of functions, laid out alike in every engine.
//
// WebAssembly code calls a function through a pointer by its index in one
// table the interpreter and every extension module share; a memory snapshot
// (snapshot.js) holds thousands of such indices. Emscripten's dynamic linker
// decides where a function goes by asking whether it is in the table already:
// it looks up the function object a module exports in a WeakMap keyed by what
// `table.get(slot)` answers. V8 and SpiderMonkey answer with that very object;
// JavaScriptCore (Safari) answers, for a slot a module's element segment
// filled, with a new object of its own, so every lookup misses, functions get
// slots of their own at the end of the table, and the layout no longer matches
// the one frozen in the snapshot (taken under Node, V8): the first call through
// a pointer lands on the wrong function.
//
// The remedy keeps the linker's own logic and gives it V8's answers: once a
// module is instantiated, before the linker reads its slots, each slot of its
// element segment that holds one of its exported functions is set to the
// exported object itself (`table.set`), after which every engine answers
// `table.get` with it. A function is recognised by its name, which the
// WebAssembly JS API defines as its index in its module. Engines that keep
// identity (a module of a few bytes tells, once) skip all of it. Measured in
// WebKitGTK 2.50: 1714 slots set, about 10 ms; a restored Python then draws.
//
// Whatever the engine, a restore then checks the result: the table's length
// and a hash of the linker's global offset table (every exported function's
// slot, every library's data address) must be what the build recorded when it
// placed the same libraries (describeFunctionTable), or the snapshot is not
// used. The length alone would not do: without the remedy WebKit's table ends
// as long as V8's, with other functions in it.

// A module with one function `f`, exported, and a table `t` holding it (types,
// functions, table, exports, elements, code).
const IDENTITY_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f,
  0x03, 0x02, 0x01, 0x00,
  0x04, 0x04, 0x01, 0x70, 0x00, 0x01,
  0x07, 0x09, 0x02, 0x01, 0x66, 0x00, 0x00, 0x01, 0x74, 0x01, 0x00,
  0x09, 0x07, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x01, 0x00,
  0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x01, 0x0b,
]);

let keepsIdentity = null;

/** Whether this engine's `table.get()` answers with the function object the module exports (once, then remembered). */
export function keepsFunctionIdentity() {
  if (keepsIdentity === null) {
    const { exports } = new WebAssembly.Instance(new WebAssembly.Module(IDENTITY_PROBE));
    keepsIdentity = exports.t.get(0) === exports.f;
  }
  return keepsIdentity;
}

/**
 * Sets each slot in [from, to) of `table` that holds one of `exports`'
 * functions to the exported object itself; `known` holds other modules'
 * function objects (a slot holding one of them is an import, answered as it
 * is). Returns how many slots were set.
 */
export function matchExportedFunctions(table, exports, from, to, known) {
  const byIndex = new Map();
  for (const value of Object.values(exports)) {
    if (typeof value === "function") byIndex.set(value.name, value);
  }
  let matched = 0;
  for (let slot = from; slot < to; slot += 1) {
    const value = table.get(slot);
    if (!value || known.has(value)) continue;
    const exported = byIndex.get(value.name);
    if (exported && exported !== value) {
      table.set(slot, exported);
      matched += 1;
    }
  }
  for (const value of byIndex.values()) known.add(value);
  return matched;
}

/**
 * Gives the dynamic linker V8's answers while `Module` is created from
 * `settings` and libraries are loaded into it: the main module's slots are
 * matched as it is received (its element segment fills [0, table length)),
 * each library's by `library(from, to, load)` around its loading. On engines
 * that keep identity, nothing is changed. `matched` counts the slots set.
 */
export class FunctionTableMatcher {
  constructor() {
    this.needed = !keepsFunctionIdentity();
    this.known = new Set();
    this.matched = 0;
  }

  /** Wraps the module's instantiateWasm (Pyodide gives one) so the main module is matched before the linker reads it. */
  watchMain(settings) {
    const instantiate = settings.instantiateWasm;
    if (!this.needed || typeof instantiate !== "function") return;
    settings.instantiateWasm = (imports, receive) =>
      instantiate(imports, (instance, module) => {
        const table = imports.env.__indirect_function_table;
        this.matched += matchExportedFunctions(table, instance.exports, 0, table.length, this.known);
        return receive(instance, module);
      });
  }

  /** Runs `load()` (one library's loading, whose element segment fills [from, to) of `table`), matching its slots. */
  async library(table, from, to, load) {
    if (!this.needed) return load();
    const instantiate = WebAssembly.instantiate;
    WebAssembly.instantiate = async (...args) => {
      const result = await instantiate.apply(WebAssembly, args);
      const instance = result.instance || result;
      this.matched += matchExportedFunctions(table, instance.exports, from, to, this.known);
      return result;
    };
    try {
      return await load();
    } finally {
      WebAssembly.instantiate = instantiate;
    }
  }
}

// FNV-1a, 32 bits: a checksum against accidents (an engine's other layout), not against tampering.
const FNV = { OFFSET: 0x811c9dc5, PRIME: 0x01000193 };

/**
 * What a restore must find once the libraries are placed, as the build
 * recorded it: {length, got, countArgs}, the table's length, a hash (hex) of
 * the values of the linker's global offset table in the order it made its
 * entries (the order of the modules' imports and exports, the same in every
 * engine): every exported function's slot, every library's data address; and
 * the slot of CPython's argument-counting helper, which Pyodide adds to the
 * table where the engine can compile it (WebAssembly GC: not on iOS, nor in
 * Node before 22), 0 where it cannot.
 */
export function describeFunctionTable(Module) {
  let hash = FNV.OFFSET;
  let count = 0;
  for (const name in Module.GOT) {
    const value = Module.GOT[name].value >>> 0;
    hash = Math.imul(hash ^ (value & 0xffff), FNV.PRIME) >>> 0;
    hash = Math.imul(hash ^ (value >>> 16), FNV.PRIME) >>> 0;
    count += 1;
  }
  return {
    length: Module.wasmTable.length,
    got: `${count}:${hash.toString(16).padStart(8, "0")}`,
    countArgs: Module._PyEM_CountArgsPtr || 0,
  };
}

/**
 * Whether a table described by describeFunctionTable, `found` in this engine,
 * is the one `recorded` by the build. The argument-counting helper matters
 * only where the build had one: its slot is in the memory (0 otherwise, and
 * CPython then never calls it).
 */
export function tableFits(found, recorded) {
  if (found.length !== recorded.length || found.got !== recorded.got) return false;
  return !recorded.countArgs || found.countArgs === recorded.countArgs;
}
