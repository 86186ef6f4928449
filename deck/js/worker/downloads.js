// What the boot downloads, counted for the progress bar as it arrives: every
// fetch of the worker, the wheels the boot installs (unpacked by wheels.js as
// they arrive) and the scripts Pyodide loads with importScripts. At most one
// progress event per PROGRESS_INTERVAL_MS goes to the page.

import { EVENT } from "../shared/protocol.js";
import { checkUrl } from "./netguard.js";
import { WORKER_URL, emit, state } from "./state.js";
import { unpackWheel } from "./wheels.js";

const PROGRESS_INTERVAL_MS = 100;

// The fetch the browser gave, taken before countFetches and the network guard
// replace self.fetch.
export const nativeFetch = self.fetch.bind(self);

function resolveUrl(input) {
  const raw = typeof input === "string" ? input : input instanceof URL ? input.href : input && input.url;
  return new URL(raw, new URL("../", WORKER_URL));
}

// Counts the bytes of every response as they arrive, for the progress bar,
// and how many bodies are still arriving (when none is, the boot step is
// compiling or starting something: the page says so instead of a frozen count).
function startDownload() {
  state.downloads += 1;
  state.stepDownloads += 1;
  let open = true;
  return () => {
    if (!open) return;
    open = false;
    state.downloads -= 1;
    emitProgress();
  };
}

// The bytes are counted on a clone and Pyodide gets the response the network
// gave: a Response rebuilt in JS is never code-cached, so wrapping
// pyodide.asm.wasm made Chromium compile the interpreter again on every visit.
function countResponse(response, ended) {
  if (!response.body) {
    ended();
    return response;
  }
  const reader = response.clone().body.getReader();
  const pump = () =>
    reader.read().then(
      (chunk) => {
        if (chunk.done) {
          ended();
          return;
        }
        addLoadedBytes(chunk.value.byteLength);
        pump();
      },
      () => ended(),
    );
  pump();
  return response;
}

// The wheels the boot installs are requested and unpacked (wheels.js) as soon
// as runtime.json names them, while the interpreter starts. Their bytes count
// for the progress bar as they arrive, but not as a download the step waits
// for: until the packages stage, the interpreter's own files are what the boot
// waits for. A wheel that fails to arrive fails the packages stage, naming it.
// Returns {wheels, libraries}: every wheel unpacked, and before that, every
// extension module's bytes, by path in site-packages (a Map). `signal` aborts
// the downloads (the device's copy of the packages came first).
export function unpackWheels(files, baseUrl, signal) {
  const libraryLists = [];
  const wheels = Promise.all(
    files.map(async ({ file, integrity }, index) => {
      let announce;
      libraryLists[index] = new Promise((resolve) => {
        announce = resolve;
      });
      const url = checkUrl(new URL(file, baseUrl));
      const fileName = url.pathname.slice(url.pathname.lastIndexOf("/") + 1);
      let bytes;
      try {
        bytes = await readCounted(await nativeFetch(url.href, { integrity, signal }));
      } catch (error) {
        throw new Error(`No se pudo descargar ${displayPath(url)}: ${error.message}`);
      }
      return unpackWheel(bytes, fileName, { onLibraries: announce });
    }),
  );
  wheels.catch(() => {});
  // A wheel that fails never announces its libraries: the race ends the wait.
  const libraries = Promise.race([
    Promise.all(libraryLists).then((lists) => new Map(lists.flat().map(({ path, data }) => [path, data]))),
    wheels.then(() => new Promise(() => {})),
  ]);
  libraries.catch(() => {});
  return { wheels, libraries };
}

async function readCounted(response) {
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return readStreamCounted(response.body);
}

// A body's bytes, whole, each chunk counted for the progress bar as it arrives.
export async function readStreamCounted(stream) {
  const reader = stream.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    chunks.push(chunk.value);
    size += chunk.value.byteLength;
    addLoadedBytes(chunk.value.byteLength);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

// Every fetch of the worker (Pyodide's own included) counted for the progress
// bar; a failed one calls `failBoot` with a message naming the file.
export function countFetches(failBoot) {
  self.fetch = async function countedFetch(input, init) {
    const url = resolveUrl(input);
    // Counted from the request on: a response that has not started is still a download.
    const ended = startDownload();
    let response;
    try {
      response = await nativeFetch(input, init);
    } catch (error) {
      ended();
      failBoot(`No se pudo descargar ${displayPath(url)}: ${error.message}`);
      throw error;
    }
    if (!response.ok) failBoot(`No se pudo descargar ${displayPath(url)}: HTTP ${response.status}`);
    return countResponse(response, ended);
  };
}

export function displayPath(url) {
  const base = new URL("../", WORKER_URL).pathname;
  return url.pathname.startsWith(base) ? url.pathname.slice(base.length) : url.href;
}

// At most one progress event per PROGRESS_INTERVAL_MS, and always one for the
// last bytes of a burst (they used to wait for the next download, so the bar
// sat at 2 MB while the 9 MB interpreter had long arrived).
function addLoadedBytes(count) {
  state.loadedBytes += count;
  const wait = PROGRESS_INTERVAL_MS - (performance.now() - state.lastProgressAt);
  if (wait <= 0) emitProgress();
  else if (state.progressTimer === null) state.progressTimer = setTimeout(emitProgress, wait);
}

export function emitProgress() {
  clearTimeout(state.progressTimer);
  state.progressTimer = null;
  state.lastProgressAt = performance.now();
  emit(EVENT.PROGRESS, {
    loaded: state.loadedBytes,
    total: state.totalBytes ? Math.max(state.totalBytes, state.loadedBytes) : 0,
    step: state.step,
    // Until the step's first download starts, it counts as downloading.
    downloading: state.downloads > 0 || state.stepDownloads === 0,
  });
}

// Scripts loaded with importScripts do not go through fetch; take their size
// from Resource Timing once they are in.
const countedScripts = new Set();
export function countImportedScripts() {
  for (const entry of performance.getEntriesByType("resource")) {
    if (!entry.name.endsWith(".js") || countedScripts.has(entry.name)) continue;
    if (entry.initiatorType === "fetch") continue;
    countedScripts.add(entry.name);
    state.loadedBytes += entry.decodedBodySize || entry.encodedBodySize || 0;
  }
}
