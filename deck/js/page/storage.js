// Edits saved in localStorage, one entry per cell, keyed by deck path + cell id.
//
// Saving can fail: no localStorage (some private windows), storage disabled,
// or full (the browser's quota, shared by every page of this origin). `save`
// says whether the edit is really kept, so the cell can tell the student the
// truth and offer the code as a file instead.

const PREFIX = "dpdeck:edits:";

function keyFor(deckPath, cellId) {
  return `${PREFIX}${deckPath}:${cellId}`;
}

function storage() {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

export class EditStore {
  constructor(deckPath) {
    this.deckPath = deckPath;
  }

  load(cellId) {
    try {
      return storage()?.getItem(keyFor(this.deckPath, cellId)) ?? null;
    } catch {
      return null;
    }
  }

  /** Keeps the edit; true if it is saved in this browser, false if it lives only in the page. */
  save(cellId, source) {
    const store = storage();
    if (!store) return false;
    try {
      store.setItem(keyFor(this.deckPath, cellId), source);
      return true;
    } catch {
      // Full (QuotaExceededError) or disabled: an older saved copy would now be
      // wrong, so it goes (freeing a little room, too).
      try {
        store.removeItem(keyFor(this.deckPath, cellId));
      } catch {
        /* nothing to remove */
      }
      return false;
    }
  }

  forget(cellId) {
    try {
      storage()?.removeItem(keyFor(this.deckPath, cellId));
    } catch {
      /* nothing saved, nothing to forget */
    }
  }
}
