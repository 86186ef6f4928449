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
// Opening a kept file (FileStore.open): asked at these moments (ms) while no try has answered, every
// try left open, and given up at OPEN_GIVE_UP_MS (Python then starts from the deck's files).
const OPEN_ASKED_AT_MS = [0, 150, 1000];
const OPEN_GIVE_UP_MS = 4000;
// What one try to open a kept file found besides a handle: no such file (final), or an error (another try may work).
const OPENED = Object.freeze({ ABSENT: "absent", FAILED: "failed" });
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

  /**
   * The kept file `name` opened for reading, or null. Chromium sometimes
   * never answers a worker's first opening of a file when the worker before
   * this one was just ended (a restart, a reload), and answers a second one
   * at once; so while no try has answered, another is started
   * (OPEN_ASKED_AT_MS; read-only handles may be open side by side), and the
   * first handle, or the first «no such file», is the answer. A try that
   * fails otherwise (an engine that locks the file for a slow earlier try)
   * decides nothing while others are on their way. Handles that arrive late
   * are closed.
   */
  open(name) {
    return new Promise((resolve) => {
      const timers = [];
      let done = false;
      let asked = 0;
      let failed = 0;
      const finish = (access) => {
        done = true;
        timers.forEach(clearTimeout);
        resolve(access);
      };
      const ask = () => {
        asked += 1;
        this.openNow(name).then((found) => {
          if (done) {
            if (found && typeof found === "object") found.close();
          } else if (found === OPENED.ABSENT) {
            finish(null);
          } else if (found === OPENED.FAILED) {
            failed += 1;
            if (failed === OPEN_ASKED_AT_MS.length) finish(null);
          } else {
            finish(found);
          }
        });
      };
      for (const at of OPEN_ASKED_AT_MS) timers.push(setTimeout(() => done || ask(), at));
      timers.push(
        setTimeout(() => {
          if (done) return;
          console.warn(`dpdeck: ${name} no se abrió (${asked} intentos); Python arranca sin esa copia`);
          finish(null);
        }, OPEN_GIVE_UP_MS),
      );
    });
  }

  /** One try to open `name` for reading: a synchronous access handle, OPENED.ABSENT or OPENED.FAILED. */
  async openNow(name) {
    let file;
    try {
      file = await this.root.getFileHandle(name);
    } catch (error) {
      // A folder of that name is no copy either (write() replaces it).
      return error && (error.name === "NotFoundError" || error.name === "TypeMismatchError") ? OPENED.ABSENT : OPENED.FAILED;
    }
    try {
      // Read only: two tabs may read at once (engines without the option lock the file instead).
      return await file.createSyncAccessHandle({ mode: "read-only" });
    } catch {
      return OPENED.FAILED;
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
      // Committed now, not when this thread next gets to its events: a cell
      // may hold the thread (an endless loop), and a worker ended with a write
      // still open left WebKit's database answering no later worker of the page.
      if (mode === "readwrite" && typeof transaction.commit === "function") transaction.commit();
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
