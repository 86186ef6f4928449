// What the worker's requests share: where the deck is, the device's storage,
// the boot's and the runs' state, the one way to speak to the page, and what
// one cell leaves behind (cellscope.js). Every other worker module reads them
// from here.

import { readWorkerName } from "../shared/workerboot.js";
import { CellScope, natives } from "./cellscope.js";
import { openDeviceStore } from "./devicestore.js";

// This script's own URL (js/worker.js): a blob: worker is told it, since its
// location is the blob's, which cannot resolve a relative URL.
export const WORKER_URL = typeof self.dpdeckWorkerUrl === "string" ? self.dpdeckWorkerUrl : self.location.href;

// The device's store (devicestore.js: the copies of Python's snapshot and
// packages are kept there), the worker's alone: taken now, before any cell
// runs, and out of every cell's reach from the first one on (storagedoors.js);
// a promise of it, or of null where the device keeps nothing.
export const deviceStore = openDeviceStore(self);

// What the page asked of this worker's boot (shared/workerboot.js).
export const bootOptions = readWorkerName(self.name);

export const state = {
  pyodide: null,
  runCell: null,
  runCheck: null,
  exportLab: null,
  loadedBytes: 0,
  totalBytes: 0,
  step: "",
  lastProgressAt: 0,
  progressTimer: null,
  // Responses whose bodies are still arriving, and how many the current boot
  // step has started.
  downloads: 0,
  stepDownloads: 0,
  // The inflated snapshot Python was restored from after a download, and the
  // downloaded packages' files (packagecopy.js), until the page asks for them
  // to be kept on the device (REQUEST.KEEP).
  snapshotToKeep: null,
  packagesToKeep: null,
  // A restored Python's throwaway figure, until the page asks for it (REQUEST.WARM).
  figureToWarm: false,
  // The device's copies this boot read (their files' names): a boot that fails after using one forgets it.
  usedCopies: new Set(),
  // After a restore, what arrives after «Python listo» (remainder.js): the
  // files cells read, and everything.
  cellFiles: null,
  remainder: null,
};

// The page's side of the protocol, once its "boot" request has brought it
// (worker.js): a port only the worker's own modules hold. Replies and events go
// there, and requests come from there; nothing a cell does can post on it or
// listen to it. Before it arrives (no cell has run yet), events go to the
// worker's own global.
let port = null;

/** The port the page's "boot" request brought; from now on, the only way to the page. */
export function usePort(pagePort) {
  port = pagePort;
}

export function hasPort() {
  return port !== null;
}

export function post(message, transfer = []) {
  if (port) port.postMessage(message, transfer);
  else natives.postMessage(message, transfer);
}

export function emit(type, payload, transfer = []) {
  post({ type, payload }, transfer);
}

// What one cell leaves behind in the worker's global scope, undone before the
// next; installed once Python is ready (boot.js).
export const cellScope = new CellScope(self);
