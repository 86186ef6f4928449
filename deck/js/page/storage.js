// Edits saved in localStorage, one entry per cell, keyed by deck path + cell id;
// and, the same way, small records of a student's work (predictions.js,
// exercises.js), each kept as JSON under its own prefix.
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

  /** Every edit saved for this deck: {cell id: source}. */
  entries() {
    return entriesUnder(`${PREFIX}${this.deckPath}:`, (text) => text);
  }
}

function entriesUnder(prefix, read) {
  const found = {};
  const store = storage();
  if (!store) return found;
  try {
    for (let index = 0; index < store.length; index += 1) {
      const key = store.key(index);
      if (!key || !key.startsWith(prefix)) continue;
      const value = read(store.getItem(key));
      if (value !== null && value !== undefined) found[key.slice(prefix.length)] = value;
    }
  } catch {
    /* storage went away: what was read so far */
  }
  return found;
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * Small JSON records of this deck, one per id, under `dpdeck:<kind>:<deck path>:<id>`
 * (kind: "predictions", "verdicts", "student"). Saving can fail like an edit's; it says so.
 */
export class JsonEntries {
  constructor(kind, deckPath) {
    this.prefix = `dpdeck:${kind}:${deckPath}:`;
  }

  load(id) {
    try {
      return parseJson(storage()?.getItem(this.prefix + id) ?? "null");
    } catch {
      return null;
    }
  }

  save(id, value) {
    try {
      const store = storage();
      if (!store) return false;
      store.setItem(this.prefix + id, JSON.stringify(value));
      return true;
    } catch {
      return false;
    }
  }

  /** Every record: {id: value}. */
  entries() {
    return entriesUnder(this.prefix, parseJson);
  }
}
