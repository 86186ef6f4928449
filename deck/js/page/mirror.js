// The speaker view in step with the room. reveal's notes plugin opens the
// speaker view (S) as a window of the deck's origin and shows the current and
// the next slide in two frames that load the deck again with ?receiver: pages
// without Python, which used to show the build's outputs only. Here the deck's
// window tells those previews what its cells show — the code as edited, each
// run as it starts, prints and ends, figures included — and a preview asks the
// deck's window to run, stop or reset a cell, or the cells of the slide. The
// deck's one Python does the work; the previews never start one.
//
// Messages go through window.postMessage, addressed to the deck's own origin,
// as plain data: {channel: MIRROR_CHANNEL, type, ...} with the types of the
// contract (protocol.js: MIRROR_TO_SPEAKER, MIRROR_TO_DECK). The deck answers
// only frames of a window it opened itself (a preview's parent's opener is the
// deck's window) and a preview listens only to that window; any other message
// is ignored. reveal's own messages are JSON strings: these are objects, and
// neither side mistakes one for the other.

import { CELL_STATUS, MIRROR_CHANNEL, MIRROR_TO_DECK, MIRROR_TO_SPEAKER } from "../shared/protocol.js";

const CELL_ID = /^[a-z0-9-]{1,80}$/;
const COMMANDS = new Set(Object.values(MIRROR_TO_DECK));

/** The window of the deck a preview belongs to (the speaker view's opener), or null. */
function deckWindowOf(preview) {
  try {
    if (preview.parent === preview) return null;
    return preview.parent.opener || null;
  } catch {
    return null;
  }
}

/**
 * In the deck's window: tells the speaker view's previews what the cells show,
 * and does what a preview asks. `deck`: {cellById(id), mirroredCells(),
 * runSlide(), stopCurrent(), resetSlide()} (deck.js).
 */
export class MirrorHost {
  constructor(deck) {
    this.deck = deck;
    this.previews = new Set();
    window.addEventListener("message", (event) => this.receive(event));
  }

  /** A message from a preview of this window's own speaker view; anything else is not for us. */
  receive(event) {
    const message = event.data;
    if (!message || typeof message !== "object" || message.channel !== MIRROR_CHANNEL) return;
    if (event.origin !== window.location.origin || !event.source || deckWindowOf(event.source) !== window) return;
    if (!COMMANDS.has(message.type)) return;
    if (message.type === MIRROR_TO_DECK.HELLO) {
      this.previews.add(event.source);
      this.post(event.source, MIRROR_TO_SPEAKER.CELLS, { cells: this.deck.mirroredCells() });
      return;
    }
    const slideCommands = {
      [MIRROR_TO_DECK.RUN_SLIDE]: () => this.deck.runSlide(),
      [MIRROR_TO_DECK.STOP_SLIDE]: () => this.deck.stopCurrent(),
      [MIRROR_TO_DECK.RESET_SLIDE]: () => this.deck.resetSlide(),
    };
    if (slideCommands[message.type]) {
      slideCommands[message.type]();
      return;
    }
    if (typeof message.cell !== "string" || !CELL_ID.test(message.cell)) return;
    const cell = this.deck.cellById(message.cell);
    if (!cell) return;
    if (message.type === MIRROR_TO_DECK.RUN) cell.run();
    else if (message.type === MIRROR_TO_DECK.STOP) cell.stop();
    else if (message.type === MIRROR_TO_DECK.RESET) cell.reset();
  }

  /** What a cell just did, to every preview still open. */
  tell(cellId, type, detail) {
    if (!this.previews.size) return;
    for (const preview of this.previews) {
      if (preview.closed) this.previews.delete(preview);
      else this.post(preview, type, { cell: cellId, ...detail });
    }
  }

  post(preview, type, detail) {
    try {
      preview.postMessage({ channel: MIRROR_CHANNEL, type, ...detail }, window.location.origin);
    } catch (error) {
      // Data that cannot be cloned is a bug of ours; the preview keeps what it had.
      console.warn("dpdeck: la vista del presentador no recibió un mensaje:", error);
    }
  }
}

/**
 * In a preview (?receiver): shows what the deck's window says, and asks it to
 * run, stop or reset. `deck`: {cellById(id), isEnhanced(id)}; what arrives for
 * a cell that has no editor yet waits for its "cell-ready".
 */
export class MirrorClient {
  constructor(deck) {
    this.deck = deck;
    this.target = deckWindowOf(window);
    this.pending = new Map();
    if (!this.target) return;
    window.addEventListener("message", (event) => this.receive(event));
    document.addEventListener("cell-ready", (event) => this.applyPending(event.detail.id));
    this.send(MIRROR_TO_DECK.HELLO, {});
  }

  get connected() {
    return Boolean(this.target);
  }

  send(type, detail) {
    if (!this.target) return;
    try {
      this.target.postMessage({ channel: MIRROR_CHANNEL, type, ...detail }, window.location.origin);
    } catch {
      /* the deck's window has gone: nothing to ask */
    }
  }

  /** The buttons of a preview's cells ask the deck's window (Cell's `remote`). */
  get remote() {
    return {
      run: (id) => this.send(MIRROR_TO_DECK.RUN, { cell: id }),
      stop: (id) => this.send(MIRROR_TO_DECK.STOP, { cell: id }),
      reset: (id) => this.send(MIRROR_TO_DECK.RESET, { cell: id }),
    };
  }

  receive(event) {
    const message = event.data;
    if (event.source !== this.target || event.origin !== window.location.origin) return;
    if (!message || typeof message !== "object" || message.channel !== MIRROR_CHANNEL) return;
    if (message.type === MIRROR_TO_SPEAKER.CELLS) {
      for (const state of Array.isArray(message.cells) ? message.cells : []) {
        this.queue(state.id, { type: MIRROR_TO_SPEAKER.CELLS, state });
      }
      return;
    }
    if (typeof message.cell === "string") this.queue(message.cell, message);
  }

  /** Applies a message to its cell now if it has its editor, else once it gets it (in order). */
  queue(cellId, message) {
    if (typeof cellId !== "string" || !CELL_ID.test(cellId)) return;
    if (this.deck.isEnhanced(cellId)) {
      this.apply(this.deck.cellById(cellId), message);
      return;
    }
    const waiting = this.pending.get(cellId) || [];
    // Only what it will show counts: the latest state, after which come the changes.
    if (message.type === MIRROR_TO_SPEAKER.CELLS || message.type === MIRROR_TO_SPEAKER.FINISH) waiting.length = 0;
    waiting.push(message);
    this.pending.set(cellId, waiting);
  }

  applyPending(cellId) {
    const waiting = this.pending.get(cellId);
    if (!waiting) return;
    this.pending.delete(cellId);
    const cell = this.deck.cellById(cellId);
    if (cell) waiting.forEach((message) => this.apply(cell, message));
  }

  apply(cell, message) {
    if (!cell) return;
    switch (message.type) {
      case MIRROR_TO_SPEAKER.CELLS: {
        const { source, status, shown } = message.state;
        cell.showSource(typeof source === "string" ? source : cell.original);
        if (shown) cell.showRunEnd(shown);
        if (typeof status === "string") cell.setStatus(status);
        break;
      }
      case MIRROR_TO_SPEAKER.SOURCE:
        if (typeof message.source === "string") cell.showSource(message.source);
        break;
      case MIRROR_TO_SPEAKER.STATUS:
        if (Object.values(CELL_STATUS).includes(message.status)) cell.setStatus(message.status);
        break;
      case MIRROR_TO_SPEAKER.BEGIN:
        cell.showRunStart();
        break;
      case MIRROR_TO_SPEAKER.STREAM:
        if (Array.isArray(message.chunks)) cell.output.appendStreams(message.chunks);
        break;
      case MIRROR_TO_SPEAKER.FINISH:
        if (message.shown && message.shown.result) cell.showRunEnd(message.shown);
        break;
      default:
        break;
    }
  }
}
