// Where the worker keeps its copies on the device (snapshot.js, packagecopy.js),
// chosen by what the engine offers, never by its name:
//
// * the origin's private file system (OPFS) where files have synchronous
//   access handles (Chromium 102, Firefox 111, Safari 15.2): a copy is read
//   straight into its buffer; it is written with a writable stream, which
//   swaps the file whole, where there is one (Safari has it only since 26),
//   else through a synchronous handle;
// * IndexedDB otherwise (WebKitGTK; a private window that refuses the file
//   system): one record per copy.
//
// The worker alone holds the store: it takes the engine's objects when it
// starts, before any cell runs. Every copy read from it is checked against
// the build's SHA-256 by whoever reads it, so a copy cut short, changed on
// the device or of another build is never used; where the browser cannot
// compute one (no crypto.subtle: a page served over http:// from another
// machine), the device keeps nothing.

const DATABASE = Object.freeze({ NAME: "dpdeck", VERSION: 1, STORE: "copias" });
// How long each try to open a kept file may take before the boot tries again, then goes on without it (FileStore.open).
const OPEN_PATIENCE_MS = [1000, 3000];
const TIMED_OUT = Symbol("timed out");
const wait = (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds));
/** Which store the device's copies live in (timings.store). */
export const STORE_KIND = Object.freeze({ FILES: "opfs", DATABASE: "indexeddb" });

// A copy's bytes with the reading side of a synchronous access handle, which is what readers use.
function bytesAccess(bytes) {
  return {
    getSize: () => bytes.byteLength,
    read(target, { at = 0 } = {}) {
      const part = bytes.subarray(at, at + target.byteLength);
      target.set(part);
      return part.byteLength;
    },
    close() {},
  };
}

function joinParts(parts) {
  const size = parts.reduce((total, part) => total + part.byteLength, 0);
  const joined = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.byteLength;
  }
  return joined;
}

class FileStore {
  constructor(root) {
    this.kind = STORE_KIND.FILES;
    this.root = root;
  }

  async open(name) {
    // Chromium sometimes never answers a worker's first opening of a file when the worker before
    // this one was just ended (a restart, a reload): asked again, it answers at once. A copy that
    // does not open after a second try is treated as absent (Python then starts from the deck's
    // files); a handle that arrives late is closed.
    for (const patience of OPEN_PATIENCE_MS) {
      const opening = this.openNow(name);
      const answer = await Promise.race([opening, wait(patience).then(() => TIMED_OUT)]);
      if (answer !== TIMED_OUT) return answer;
      opening.then((access) => access && access.close());
    }
    console.warn(`dpdeck: ${name} no se abrió; Python arranca sin esa copia`);
    return null;
  }

  async openNow(name) {
    try {
      const file = await this.root.getFileHandle(name);
      // Read only: two tabs may read at once (engines without the option lock the file instead).
      return await file.createSyncAccessHandle({ mode: "read-only" });
    } catch {
      return null;
    }
  }

  async write(name, parts) {
    let file;
    try {
      file = await this.root.getFileHandle(name, { create: true });
    } catch (error) {
      // A folder of that name (never the deck's: it keeps files only) would block every copy for good: it goes.
      if (!error || error.name !== "TypeMismatchError") throw error;
      await this.root.removeEntry(name, { recursive: true });
      file = await this.root.getFileHandle(name, { create: true });
    }
    if (typeof file.createWritable === "function") {
      const writable = await file.createWritable();
      try {
        for (const part of parts) await writable.write(part);
        await writable.close();
      } catch (error) {
        await writable.abort().catch(() => {});
        throw error;
      }
      return;
    }
    // In place: a reader that finds it half written rejects it (its SHA-256).
    const access = await file.createSyncAccessHandle();
    try {
      access.truncate(0);
      let at = 0;
      for (const part of parts) at += access.write(part, { at });
      access.flush();
    } finally {
      access.close();
    }
  }

  async remove(name) {
    try {
      await this.root.removeEntry(name, { recursive: true });
    } catch (error) {
      if (!error || error.name !== "NotFoundError") throw error;
    }
  }
}

class DatabaseStore {
  constructor(database) {
    this.kind = STORE_KIND.DATABASE;
    this.database = database;
  }

  request(mode, action) {
    return new Promise((resolve, reject) => {
      const transaction = this.database.transaction(DATABASE.STORE, mode);
      const request = action(transaction.objectStore(DATABASE.STORE));
      transaction.oncomplete = () => resolve(request.result);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error || new Error("IndexedDB: transacción abortada"));
    });
  }

  async open(name) {
    try {
      const value = await this.request("readonly", (store) => store.get(name));
      return value instanceof ArrayBuffer ? bytesAccess(new Uint8Array(value)) : null;
    } catch {
      return null;
    }
  }

  async write(name, parts) {
    const joined = joinParts(parts);
    await this.request("readwrite", (store) => store.put(joined.buffer, name));
  }

  async remove(name) {
    await this.request("readwrite", (store) => store.delete(name));
  }
}

function openDatabase(indexedDB) {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE.NAME, DATABASE.VERSION);
    request.onupgradeneeded = () => request.result.createObjectStore(DATABASE.STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error("IndexedDB: otra pestaña tiene abierta una versión anterior"));
  });
}

function hasSyncAccessHandles(scope) {
  const handle = scope.FileSystemFileHandle;
  return typeof handle === "function" && typeof handle.prototype.createSyncAccessHandle === "function";
}

/**
 * The device's store for this worker (`scope`: the worker's global, taken now),
 * or null where there is none (a private window that allows no storage…).
 * Resolves once the store is open; never rejects.
 */
export async function openDeviceStore(scope) {
  if (!scope.crypto || !scope.crypto.subtle) return null;
  const storage = scope.navigator && scope.navigator.storage;
  const indexedDB = scope.indexedDB;
  if (storage && typeof storage.getDirectory === "function" && hasSyncAccessHandles(scope)) {
    try {
      return new FileStore(await storage.getDirectory());
    } catch {
      // No private file system after all (some engines refuse it in private windows): try the database.
    }
  }
  if (indexedDB && typeof indexedDB.open === "function") {
    try {
      return new DatabaseStore(await openDatabase(indexedDB));
    } catch {
      return null;
    }
  }
  return null;
}
