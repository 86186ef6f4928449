// The deck's page script: starts reveal.js, turns every `.cell` into a live
// cell, and boots Python in a worker once the first slide is on screen.
//
// Root hooks: <html data-python="off|loading|ready|error"> and
// data-cells="ready" once every cell has its editor.

import { Cell } from "./cells.js";
import { EditStore } from "./storage.js";
import { WORKER_URL } from "./earlyworker.js";
import { SLIDE_GEOMETRY } from "./geometry.js";
import { PythonRuntime } from "./python.js";
import { translateRevealScreens } from "./revealscreens.js";
import { prepareSpeakerView } from "./speaker.js";
import { FILE_PAGE_MESSAGE, FILE_PAGE_SUMMARY, StatusPanel, Toast } from "./status.js";
import {
  autorunEnabled,
  deckBaseUrl,
  deckPath,
  isFilePage,
  isPrintPdf,
  isReceiver,
  pythonAllowed,
} from "./page.js";

/** reveal.js settings, in one place. */
const REVEAL_DEFAULTS = {
  // The slides are authored at 1280×720 (16:9); reveal scales them to the screen
  // (the page's first paint, preview.js, copies that layout).
  ...SLIDE_GEOMETRY,
  // Content starts at the top of each slide (the theme sizes every section).
  center: false,
  // Each slide has its own URL (#/3), so a reload keeps your place.
  hash: true,
  // "3 / 40" in the corner: useful for questions from the back of the room.
  slideNumber: "c/t",
  showSlideNumber: "all",
  controls: true,
  progress: true,
  // O / Esc shows every slide at once.
  overview: true,
  keyboard: true,
  touch: true,
  // A quick fade: a cut is easier to follow on a projector than a slide-in.
  transition: "fade",
  transitionSpeed: "fast",
  backgroundTransition: "none",
  // Keep nearby slides laid out so their editors are ready when you arrive.
  viewDistance: 3,
  // ?print-pdf: one page per slide, fragments (the answers) shown.
  pdfSeparateFragments: false,
  pdfMaxPagesPerSlide: 1,
  // Speaker notes stay in the speaker view (S), never on the projected slide.
  showNotes: false,
};


const RECEIVER_MESSAGE = "Esta vista solo refleja las diapositivas; ejecuta las celdas en la ventana principal.";

function startReveal() {
  const Reveal = window.Reveal;
  if (!Reveal) return Promise.resolve(null);
  const plugins = window.RevealNotes ? [window.RevealNotes] : [];
  return Reveal.initialize({ ...REVEAL_DEFAULTS, plugins }).then(() => {
    translateRevealScreens(Reveal);
    return Reveal;
  });
}

function whenIdle(callback) {
  if ("requestIdleCallback" in window) window.requestIdleCallback(callback, { timeout: 200 });
  else setTimeout(callback, 16);
}

class Deck {
  constructor() {
    this.root = document.documentElement;
    this.root.dataset.python = "off";
    this.store = new EditStore(deckPath);
    this.cells = new Map();
    this.reveal = null;
    this.autorunDone = false;
    this.runtime = pythonAllowed
      ? new PythonRuntime({ workerUrl: WORKER_URL, baseUrl: deckBaseUrl })
      : null;
    this.unavailableMessage = isFilePage ? FILE_PAGE_MESSAGE : isReceiver ? RECEIVER_MESSAGE : null;
    this.status = null;
    this.toast = null;
    if (!isPrintPdf && !isReceiver) {
      this.toast = new Toast();
      this.status = new StatusPanel({
        onRetry: () => this.runtime && this.runtime.restart(),
        onRestart: () => this.runtime && this.runtime.restart(),
        onRestoreAll: () => this.restoreAll(),
      });
      this.status.show("off", isFilePage ? { summary: FILE_PAGE_SUMMARY, detail: FILE_PAGE_MESSAGE } : {});
      this.status.setRestoreEnabled(false);
    }
    if (this.runtime) this.watchRuntime();
    document.addEventListener("cell-edited", () => this.updateRestoreButton());
    // Edits are saved a moment after typing stops; leaving the page saves them at once.
    const saveAll = () => this.cells.forEach((cell) => cell.flushSave());
    window.addEventListener("pagehide", saveAll);
    document.addEventListener("visibilitychange", () => document.visibilityState === "hidden" && saveAll());
  }

  watchRuntime() {
    const runtime = this.runtime;
    runtime.addEventListener("state", (event) => {
      const { state, failure } = event.detail;
      if (this.status) this.status.show(state, { progress: runtime.progress, failure });
      if (state === "ready") this.autorun();
    });
    runtime.addEventListener("progress", (event) => {
      if (this.status && runtime.state === "loading") this.status.show("loading", { progress: event.detail });
    });
  }

  async start() {
    // Python boots in its own thread: starting it first overlaps its download
    // and compilation with reveal's layout of the slides.
    if (this.runtime) this.runtime.start();
    this.reveal = await startReveal();
    const all = Array.from(document.querySelectorAll(".cell[data-cell-id]"));
    const current = this.reveal ? this.reveal.getCurrentSlide() : null;
    // Cells on screen first, the rest a few at a time when the page is idle.
    const first = all.filter((element) => current && current.contains(element));
    const rest = all.filter((element) => !first.includes(element));
    first.forEach((element) => this.enhance(element));
    this.enhanceLater(rest);
    if (this.reveal) {
      this.reveal.on("slidechanged", (event) => this.cellsIn(event.currentSlide).forEach((cell) => cell.refresh()));
    }
  }

  enhance(element) {
    if (element.dataset.enhanced) return;
    try {
      const cell = new Cell(element, {
        runtime: this.runtime,
        store: this.store,
        readOnly: isPrintPdf || isReceiver,
        unavailableMessage: this.unavailableMessage,
      });
      this.cells.set(cell.id, cell);
    } catch (error) {
      // One broken cell must not take the others (or the slides) with it.
      console.error(`celda ${element.dataset.cellId}:`, error);
    }
  }

  enhanceLater(elements) {
    const batch = elements.splice(0, 4);
    batch.forEach((element) => this.enhance(element));
    if (elements.length) {
      whenIdle(() => this.enhanceLater(elements));
    } else {
      this.root.dataset.cells = "ready";
      this.updateRestoreButton();
    }
  }

  cellsIn(slide) {
    if (!slide) return [];
    return Array.from(slide.querySelectorAll(".cell[data-cell-id]"))
      .map((element) => this.cells.get(element.dataset.cellId))
      .filter(Boolean);
  }

  /** Once, when Python first becomes ready: recompute the cells on screen. */
  autorun() {
    if (this.autorunDone) return;
    this.autorunDone = true;
    if (!autorunEnabled || !this.reveal) return;
    for (const cell of this.cellsIn(this.reveal.getCurrentSlide())) {
      if (!cell.edited && !this.runtime.isQueued(cell.id) && !this.runtime.isRunning(cell.id)) cell.run();
    }
  }

  /** Every edited cell back to its original code; for a while, one click undoes it. */
  restoreAll() {
    const restored = [];
    for (const cell of this.cells.values()) {
      if (!cell.edited) continue;
      restored.push({ cell, source: cell.source });
      cell.reset();
    }
    this.updateRestoreButton();
    if (!restored.length || !this.toast) return;
    const count = restored.length;
    this.toast.show(count === 1 ? "Se restauró 1 celda" : `Se restauraron ${count} celdas`, {
      actionText: "Deshacer",
      actionName: "undo-restore",
      action: () => {
        // A cell edited again since then keeps its new code.
        for (const { cell, source } of restored) if (!cell.edited) cell.setSource(source);
        this.updateRestoreButton();
      },
    });
  }

  updateRestoreButton() {
    if (!this.status) return;
    const anyEdited = Array.from(this.cells.values()).some((cell) => cell.edited);
    this.status.setRestoreEnabled(anyEdited);
  }
}

// Before reveal's notes plugin can open the speaker view (S, or ?notes at start).
if (!isReceiver && !isPrintPdf) prepareSpeakerView(deckBaseUrl);

const deck = new Deck();
window.dpdeck = deck;
deck.start().catch((error) => console.error("dpdeck:", error));
