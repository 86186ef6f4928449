// The last live output of each edited cell, saved in localStorage next to its
// edit, so that after a reload the student's code comes back with its own
// result (labelled as their last run) instead of the original's.
//
// One entry per cell, keyed like the edits (deck path + cell id):
//   {version, source, status, elapsedMs, savedAt, figuresDropped, outputs}
// where outputs are the run's outputs as the contract describes them, with
// each figure's PNG as base64. Text is already capped by the contract
// (MAX_OUTPUT_CHARS). Figures are kept within a budget per cell, and all saved
// outputs within a budget for the deck (config.js): past it the oldest saved
// outputs of other cells go first. When the browser's storage is full the
// figures are dropped, then older outputs; the edit itself always wins.

import { OUTPUT } from "../shared/protocol.js";

const PREFIX = "dpdeck:outputs:";
const VERSION = 1;

function storage() {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

function isQuotaError(error) {
  return error && (error.name === "QuotaExceededError" || error.name === "NS_ERROR_DOM_QUOTA_REACHED" ||
    error.code === 22 || error.code === 1014);
}

/** Uint8Array → base64, in chunks (a figure is tens of kilobytes). */
export function bytesToBase64(bytes) {
  let binary = "";
  const chunk = 0x8000;
  for (let index = 0; index < bytes.length; index += chunk) {
    binary += String.fromCharCode.apply(null, bytes.subarray(index, index + chunk));
  }
  return btoa(binary);
}

export function base64ToBytes(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/** A run's outputs as plain JSON-able data (figures as base64 PNG). */
function serialize(outputs) {
  return (outputs || []).map((output) => {
    if (output.type !== OUTPUT.FIGURE) return { ...output };
    const data = output.data instanceof Uint8Array ? bytesToBase64(output.data) : String(output.data || "");
    return { type: output.type, format: output.format || "png", width: output.width, height: output.height, data };
  });
}

export class SavedOutputs {
  /** budget: {figureChars, totalChars} (config.js: savedFigureChars, savedOutputsChars). */
  constructor(deckPath, { figureChars, totalChars }) {
    this.deckPath = deckPath;
    this.figureChars = figureChars;
    this.totalChars = totalChars;
  }

  key(cellId) {
    return `${PREFIX}${this.deckPath}:${cellId}`;
  }

  /** The saved entry of a cell (figures still as base64), or null. */
  load(cellId) {
    try {
      const text = storage()?.getItem(this.key(cellId));
      if (!text) return null;
      const entry = JSON.parse(text);
      return entry && entry.version === VERSION && Array.isArray(entry.outputs) ? entry : null;
    } catch {
      return null;
    }
  }

  /**
   * Saves a finished run of `source`. Returns {saved, figuresDropped}: saved
   * false when not even its text fits (the output then lives as long as the page).
   */
  save(cellId, source, result) {
    const store = storage();
    if (!store) return { saved: false, figuresDropped: 0 };
    const outputs = serialize(result.outputs);
    const figureChars = outputs.filter((o) => o.type === OUTPUT.FIGURE).reduce((sum, o) => sum + o.data.length, 0);
    const entry = {
      version: VERSION,
      source,
      status: result.status,
      elapsedMs: typeof result.elapsedMs === "number" ? result.elapsedMs : null,
      notice: result.notice || null,
      savedAt: Date.now(),
      figuresDropped: 0,
      outputs,
    };
    const withoutFigures = () => ({
      ...entry,
      figuresDropped: outputs.filter((o) => o.type === OUTPUT.FIGURE).length,
      outputs: outputs.filter((o) => o.type !== OUTPUT.FIGURE),
    });
    // Over the figure budget, the text is saved alone.
    const attempts = figureChars > this.figureChars ? [withoutFigures()] : [entry, withoutFigures()];
    for (const attempt of attempts) {
      const text = JSON.stringify(attempt);
      if (text.length > this.totalChars) continue;
      this.makeRoom(cellId, text.length);
      if (this.write(store, cellId, text)) return { saved: true, figuresDropped: attempt.figuresDropped };
      // The browser is full (other sites, edits): older outputs give way, once.
      this.evictOldest(cellId, Infinity);
      if (this.write(store, cellId, text)) return { saved: true, figuresDropped: attempt.figuresDropped };
    }
    this.forget(cellId);
    return { saved: false, figuresDropped: outputs.filter((o) => o.type === OUTPUT.FIGURE).length };
  }

  write(store, cellId, text) {
    try {
      store.setItem(this.key(cellId), text);
      return true;
    } catch (error) {
      if (!isQuotaError(error)) console.warn("dpdeck: no se pudo guardar la salida:", error);
      return false;
    }
  }

  forget(cellId) {
    try {
      storage()?.removeItem(this.key(cellId));
    } catch {
      /* nothing saved, nothing to forget */
    }
  }

  /** Every saved output of this deck but `cellId`'s: [{key, size, savedAt}], oldest first. */
  others(cellId) {
    const store = storage();
    const found = [];
    if (!store) return found;
    const prefix = `${PREFIX}${this.deckPath}:`;
    for (let index = 0; index < store.length; index += 1) {
      const key = store.key(index);
      if (!key || !key.startsWith(prefix) || key === this.key(cellId)) continue;
      const text = store.getItem(key) || "";
      let savedAt = 0;
      try {
        savedAt = JSON.parse(text).savedAt || 0;
      } catch {
        /* a damaged entry goes first */
      }
      found.push({ key, size: text.length, savedAt });
    }
    return found.sort((a, b) => a.savedAt - b.savedAt);
  }

  /** Keeps the deck's saved outputs within the budget once `size` more is written for `cellId`. */
  makeRoom(cellId, size) {
    const others = this.others(cellId);
    let total = others.reduce((sum, entry) => sum + entry.size, 0) + size;
    for (const entry of others) {
      if (total <= this.totalChars) break;
      storage()?.removeItem(entry.key);
      total -= entry.size;
    }
  }

  /** Drops other cells' saved outputs, oldest first, until `chars` are freed (all of them with Infinity). */
  evictOldest(cellId, chars) {
    let freed = 0;
    for (const entry of this.others(cellId)) {
      if (freed >= chars) break;
      try {
        storage()?.removeItem(entry.key);
      } catch {
        /* ignore */
      }
      freed += entry.size;
    }
  }
}
