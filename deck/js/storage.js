// Edits saved in localStorage, one entry per cell, keyed by deck path + cell id.

const PREFIX = "dpdeck:edits:";

function keyFor(deckPath, cellId) {
  return `${PREFIX}${deckPath}:${cellId}`;
}

// localStorage can be missing or throw (private windows, file://, quota): edits
// then live only as long as the page, and nothing else breaks.
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

  save(cellId, source) {
    try {
      storage()?.setItem(keyFor(this.deckPath, cellId), source);
    } catch {
      /* quota or disabled storage: keep the edit in the page only */
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
