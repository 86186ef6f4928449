// Python's worker is created by the page's first inline script, before the
// slides are parsed, so Pyodide downloads and compiles while the page is
// still loading; the deck's runtime adopts it when it starts (python.js).
// The two live in different scripts, so the hand-over is one property of window.
// It starts from a blob: URL, like every Python worker, so that it runs under
// the page's Content-Security-Policy (workerstart.js).

import { deckBaseUrl, pythonAllowed } from "./page.js";
import { startPolicedWorker } from "./workerstart.js";

const EARLY_WORKER = "__dpdeckEarlyWorker";

/** The deck's worker script, next to its page script. */
export const WORKER_URL = new URL("js/worker.js", deckBaseUrl).href;

/** Starts the worker now (once, and only where Python may run). */
export function startEarlyWorker() {
  if (!pythonAllowed || window[EARLY_WORKER] || typeof Worker !== "function") return;
  try {
    window[EARLY_WORKER] = startPolicedWorker(WORKER_URL);
  } catch {
    // The runtime will try again itself and report what fails.
  }
}

/** The worker started early, handed over once; null if there is none. */
export function takeEarlyWorker() {
  const worker = window[EARLY_WORKER] || null;
  window[EARLY_WORKER] = null;
  return worker;
}
