// Whether this device downloads Python (Pyodide, numpy, matplotlib: about
// 27 MB) as soon as the slides open, or only when a cell is run. The one owner
// of that choice: the page's first script (firstpaint.js) starts Python's
// worker only if so, the deck (deck.js) then adopts it or offers the
// download, the menu changes it, and it is remembered on this device.
//
// Without a choice of its own, a device downloads at once unless it asks to
// save data (navigator.connection.saveData, a metered connection) or shows
// the slides as pages (a phone or an upright tablet): those wait for a run.

import { LAYOUT, windowLayout } from "./layout.js";
import { Preference } from "./preferences.js";

const preference = new Preference("download-python", (text) =>
  text === "yes" ? true : text === "no" ? false : undefined,
);

function savesData() {
  return Boolean(navigator.connection && navigator.connection.saveData);
}

/** True when Python should start downloading as soon as the slides open. */
export function downloadsOnOpen() {
  const fallback = !savesData() && windowLayout().layout !== LAYOUT.REFLOW;
  return preference.load(fallback);
}

/** Whether the person chose (rather than the device's default). */
export function hasChosen() {
  return preference.load(null) !== null;
}

/** Remembers the choice on this device. */
export function setDownloadsOnOpen(yes) {
  preference.save(yes ? "yes" : "no");
  document.dispatchEvent(new CustomEvent(PYTHON_CHOICE_CHANGED, { detail: { downloadsOnOpen: yes } }));
}

/** Dispatched on document when the choice changes: {downloadsOnOpen}. */
export const PYTHON_CHOICE_CHANGED = "dpdeck:python-choice";

/** How much the boot downloads, as the build wrote it (runtime.json), in whole MB; null if unknown. */
export async function downloadMegabytes(baseUrl) {
  try {
    const response = await fetch(new URL("runtime.json", baseUrl));
    const runtime = await response.json();
    return runtime.bytes ? Math.round(runtime.bytes / 1e6) : null;
  } catch {
    return null;
  }
}
