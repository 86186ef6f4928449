// What the worker's requests share: where the deck is, the device's storage,
// the boot's and the runs' state, the one way to speak to the page, and what
// one cell leaves behind (cellscope.js). Every other worker module reads them
// from here.

import { CellScope, natives } from "./cellscope.js";

// This script's own URL (js/worker.js): a blob: worker is told it, since its
// location is the blob's, which cannot resolve a relative URL.
export const WORKER_URL = typeof self.dpdeckWorkerUrl === "string" ? self.dpdeckWorkerUrl : self.location.href;

// The origin's storage (a copy of Python's snapshot is kept there), taken
// before any cell runs; absent outside secure contexts.
export const deviceStorage = self.navigator ? self.navigator.storage : undefined;

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
};

export function post(message, transfer = []) {
  natives.postMessage(message, transfer);
}

export function emit(type, payload, transfer = []) {
  post({ type, payload }, transfer);
}

// What one cell leaves behind in the worker's global scope, undone before the
// next; installed once Python is ready (boot.js).
export const cellScope = new CellScope(self);
