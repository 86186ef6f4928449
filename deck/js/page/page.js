// What kind of page this is, read once from the URL.

const search = new URLSearchParams(window.location.search);

/** Speaker view iframes load the deck with ?receiver: they only mirror slides. */
export const isReceiver = /receiver/i.test(window.location.search);

/**
 * The speaker view's preview of the current slide (reveal's notes plugin adds
 * postMessageEvents=true to it, not to the next slide's): its cells get the
 * buttons that drive the deck's window (mirror.js).
 */
export const isCurrentPreview = isReceiver && /postMessageEvents=true/i.test(window.location.search);

/** ?print-pdf lays every slide out for printing; outputs are already in the page. */
export const isPrintPdf = /print-pdf/i.test(window.location.search);

/** ?autorun=0 keeps the pre-computed outputs when Python becomes ready. */
export const autorunEnabled = search.get("autorun") !== "0";

/** Opened as a file: workers cannot start, so Python stays off. */
export const isFilePage = window.location.protocol === "file:";

/** Python boots only in a real, served, interactive view of the deck. */
export const pythonAllowed = !isReceiver && !isPrintPdf && !isFilePage;

/**
 * The deck's folder path, the key under which edits are saved: the same deck
 * keeps its edits whatever slide (hash) or query string is in the URL, and two
 * decks on one server do not share them.
 */
export const deckPath = window.location.pathname.replace(/index\.html?$/i, "");

/** Base URL of the deck folder (dist/), for the worker and runtime.json. */
export const deckBaseUrl = new URL(".", window.location.href).href;
