// What a person chose on this device and the deck remembers (localStorage):
// the code size, whether Python may be downloaded. One entry per preference
// and deck, so two decks on one server keep their own.

import { deckPath } from "./page.js";

const PREFIX = "dpdeck:prefs:";

// localStorage can be missing or throw (private windows, file://, quota): a
// preference then lasts as long as the page.
function storage() {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

export class Preference {
  /** name: the preference's key; read with `parse` (text → value, or undefined if not valid). */
  constructor(name, parse) {
    this.key = `${PREFIX}${deckPath}:${name}`;
    this.parse = parse;
  }

  /** The saved value, or `fallback` when none (or not valid). */
  load(fallback) {
    let text = null;
    try {
      text = storage()?.getItem(this.key) ?? null;
    } catch {
      text = null;
    }
    if (text === null) return fallback;
    const value = this.parse(text);
    return value === undefined ? fallback : value;
  }

  save(value) {
    try {
      storage()?.setItem(this.key, String(value));
    } catch {
      /* disabled or full storage: the choice lasts as long as the page */
    }
  }

  forget() {
    try {
      storage()?.removeItem(this.key);
    } catch {
      /* nothing saved */
    }
  }
}
