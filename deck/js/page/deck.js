// The live deck, as a reveal.js plugin: turns every `.cell` into a live cell,
// takes over Python's worker (started by the page's first script), and shows
// Python's state (the status chip and <html data-python>).
//
// Page hooks it owns: <html data-python="off|loading|ready|error"> and
// data-cells="ready" once every cell has its editor. Scripts and tests drive
// it through Reveal.getPlugin("dpdeck") (deck/README.md, «Para scripts y
// pruebas»), never through its internals.

import { Cell } from "./cells.js";
import { loadPrerenderedFigures } from "./outputs.js";
import defaults from "./config.js";
import { EditStore } from "./storage.js";
import { SavedOutputs } from "./savedoutputs.js";
import { MIRROR_TO_DECK, MIRROR_TO_SPEAKER, REQUEST } from "../shared/protocol.js";
import { MirrorClient, MirrorHost } from "./mirror.js";
import { PYTHON_STATE, PythonRuntime, RUNTIME_EVENT } from "./python.js";
import { FILE_PAGE_CELL_NOTE, FILE_PAGE_MESSAGE, FILE_PAGE_SUMMARY, StatusPanel, Toast } from "./status.js";
import { WORKER_URL } from "./earlyworker.js";
import { LAYOUT_CHANGED } from "./layout.js";
import { PYTHON_CHOICE_CHANGED, downloadMegabytes, downloadsOnOpen, setDownloadsOnOpen } from "./pythonchoice.js";
import {
  autorunEnabled, deckBaseUrl, deckPath, isCurrentPreview, isFilePage, isPrintPdf, isReceiver, pythonAllowed,
} from "./page.js";

const RECEIVER_MESSAGE = "Esta vista solo refleja las diapositivas; ejecuta las celdas en la ventana principal.";
const OUTPUT_NOT_SAVED_MESSAGE = "Este navegador no tiene sitio para guardar las salidas; tu código sí se guardó.";
const FIGURES_NOT_SAVED_MESSAGE = "Las figuras de tus ejecuciones no caben en este navegador: se guardó solo el texto.";
// The queue key of the lab's runs (the challenge's «Comprobar» and «Exportar»).
const LAB_KEY = "laboratorio";
const NOT_DOWNLOADED_SUMMARY = "Python sin descargar";
const NOT_DOWNLOADED_DETAIL =
  "Python (Pyodide con numpy y matplotlib) se descarga la primera vez que ejecutes una celda, " +
  "o ahora con «Descargar». Hasta entonces ves los resultados calculados al crear las " +
  "diapositivas. El índice (M) recuerda si este dispositivo lo descarga al abrir las diapositivas.";
const D_KEY = 68;
// Where Shift+Enter (or Ctrl+Enter) belongs to something else: typing, a button, a link,
// the index, the status chip.
const OWN_ENTER = "input, textarea, select, button, a[href], [contenteditable='true'], dialog.deck-menu, .python-status";
const E_KEY = 69;
const R_KEY = 82;

function whenIdle(callback) {
  if ("requestIdleCallback" in window) window.requestIdleCallback(callback, { timeout: 200 });
  else setTimeout(callback, 16);
}

class LiveDeck {
  /** settings: the `dpdeck` part of the deck's settings (config.js). */
  constructor(settings) {
    this.settings = settings;
    this.root = document.documentElement;
    this.store = new EditStore(deckPath);
    this.savedOutputs = new SavedOutputs(deckPath, {
      figureChars: settings.savedFigureChars,
      totalChars: settings.savedOutputsChars,
    });
    this.cells = new Map();
    this.reveal = null;
    this.autorunDone = false;
    this.runtime = pythonAllowed
      ? new PythonRuntime({
          workerUrl: WORKER_URL,
          baseUrl: deckBaseUrl,
          interruptGraceMs: settings.interruptGraceMs,
          bootStallMs: settings.bootStallMs,
          keepQuietMs: settings.pythonCacheQuietMs,
          warmQuietMs: settings.pythonWarmQuietMs,
        })
      : null;
    this.unavailableMessage = isFilePage ? FILE_PAGE_MESSAGE : isReceiver ? RECEIVER_MESSAGE : null;
    // The speaker view's previews show what this window's cells show, and drive its Python (mirror.js).
    this.mirrorHost = !isReceiver && !isPrintPdf ? new MirrorHost(this) : null;
    this.mirrorClient = isReceiver ? new MirrorClient({
      isEnhanced: (id) => this.cells.has(id),
      cellById: (id) => this.cells.get(id) || null,
    }) : null;
    this.status = null;
    this.toast = null;
    this.root.dataset.python = PYTHON_STATE.OFF;
    if (!isPrintPdf && !isReceiver) {
      this.toast = new Toast();
      this.status = new StatusPanel({
        onRetry: () => this.runtime && this.runtime.restart(),
        onRestart: () => this.runtime && this.runtime.restart(),
        onRestoreAll: () => this.restoreAll(),
        onDownload: () => this.runtime && this.runtime.start(),
        onDecline: () => this.declinePython(),
      });
      this.status.show(PYTHON_STATE.OFF, isFilePage ? { summary: FILE_PAGE_SUMMARY, detail: FILE_PAGE_MESSAGE } : {});
      this.status.setRestoreEnabled(false);
    }
    if (this.runtime) {
      this.watchRuntime();
      // Python has been booting since the page's first script started its worker
      // (firstpaint.js), unless this device waits for a run to download it
      // (pythonchoice.js: a phone, a metered connection, or the person's choice).
      if (downloadsOnOpen()) this.runtime.start();
    }
    document.addEventListener("cell-edited", () => this.updateRestoreButton());
    // Said once a visit: a full browser must not nag after every run.
    const warned = new Set();
    document.addEventListener("cell-output-not-saved", (event) => {
      const message = event.detail.saved ? FIGURES_NOT_SAVED_MESSAGE : OUTPUT_NOT_SAVED_MESSAGE;
      if (!this.toast || warned.has(message)) return;
      warned.add(message);
      this.toast.show(message, { actionText: "Entendido", actionName: "dismiss", durationMs: this.settings.noticeMs });
    });
    // The slide's shape, the code size or a zoomed cell changed the room cells have.
    document.addEventListener(LAYOUT_CHANGED, () => this.cells.forEach((cell) => cell.refit()));
    document.addEventListener("cell-unsaved", (event) => this.tellUnsaved(event.detail.cellId));
    // Edits are saved a moment after typing stops; leaving the page saves them at once.
    const saveAll = () => this.cells.forEach((cell) => cell.flushSave());
    window.addEventListener("pagehide", saveAll);
    document.addEventListener("visibilitychange", () => document.visibilityState === "hidden" && saveAll());
  }

  watchRuntime() {
    const runtime = this.runtime;
    runtime.addEventListener(RUNTIME_EVENT.STATE, (event) => {
      const { state, failure } = event.detail;
      this.root.dataset.python = state;
      if (state === PYTHON_STATE.OFF) this.offerPython();
      else if (this.status) this.status.show(state, { progress: runtime.progress, failure });
      if (state === PYTHON_STATE.READY) this.autorun();
    });
    // The menu's «download Python on opening»: turned on, it downloads now; off, a download under way stops.
    document.addEventListener(PYTHON_CHOICE_CHANGED, (event) => {
      if (event.detail.downloadsOnOpen && runtime.state === PYTHON_STATE.OFF) runtime.start();
      else if (!event.detail.downloadsOnOpen) this.stopDownload();
    });
    runtime.addEventListener(RUNTIME_EVENT.PROGRESS, (event) => {
      if (this.status && runtime.state === PYTHON_STATE.LOADING) {
        this.status.show(PYTHON_STATE.LOADING, { progress: event.detail });
      }
    });
    // Python broke while no cell was running (a running cell says it in its
    // output), or its boot has something to say once (it started without its
    // saved memory, or a copy on the device was not used).
    for (const type of [RUNTIME_EVENT.CRASH, RUNTIME_EVENT.NOTICE]) {
      runtime.addEventListener(type, (event) => {
        if (this.toast) {
          this.toast.show(event.detail.message, { actionText: "Entendido", action: () => {}, durationMs: 15_000 });
        }
      });
    }
  }

  /**
   * Once reveal is ready: the pre-computed figures load; the cells on screen get
   * their editors at once, those of each slide shown next as it is shown, and
   * the rest a few at a time when the page is idle and Python is not busy
   * (enhanceLater).
   */
  start(reveal) {
    this.reveal = reveal;
    loadPrerenderedFigures();
    const all = Array.from(document.querySelectorAll(".cell[data-cell-id]"));
    const current = reveal.getCurrentSlide();
    const first = all.filter((element) => current && current.contains(element));
    const rest = all.filter((element) => !first.includes(element));
    first.forEach((element) => this.enhance(element));
    this.enhanceLater(rest);
    reveal.on("slidechanged", (event) => {
      this.enhanceSlide(event.currentSlide);
      this.cellsIn(event.currentSlide).forEach((cell) => cell.refresh());
    });
    // Not downloading: nothing of Python is fetched until a cell runs or the chip's «Descargar».
    if (this.runtime && this.runtime.state === PYTHON_STATE.OFF) this.offerPython();
  }

  /** The chip while Python is off on a page that can run it: it says so and offers the download. */
  offerPython() {
    if (!this.status) return;
    this.status.show(PYTHON_STATE.OFF, { summary: NOT_DOWNLOADED_SUMMARY, detail: NOT_DOWNLOADED_DETAIL, offer: true });
    if (this.megabytes === undefined) {
      this.megabytes = null;
      downloadMegabytes(deckBaseUrl).then((megabytes) => {
        this.megabytes = megabytes;
        if (this.status) this.status.setDownloadSize(megabytes);
      });
    }
  }

  /** «No descargar»: this device remembers not to download Python on opening (and the download stops). */
  declinePython() {
    setDownloadsOnOpen(false);
  }

  stopDownload() {
    if (!this.runtime || this.runtime.state !== PYTHON_STATE.LOADING) return;
    // Runs waiting for this boot go back to what they showed; running one again asks for Python.
    this.cells.forEach((cell) => this.runtime.cancel(cell.id));
    this.runtime.terminate("");
  }

  /**
   * Shift+Enter (or Ctrl+Enter) outside an editor: runs the cell whose code has
   * the focus, or else the cells of the slide on screen, in order — as in a
   * notebook, without first clicking into the code. Cells already waiting or
   * running are left alone.
   */
  async runFromKeys(event) {
    const cellElement = event.target.closest && event.target.closest(".cell[data-cell-id]");
    const cells = cellElement
      ? [this.cellById(cellElement.dataset.cellId)].filter(Boolean)
      : this.cellsIn(this.reveal && this.reveal.getCurrentSlide());
    const busy = (cell) => this.runtime && (this.runtime.isQueued(cell.id) || this.runtime.isRunning(cell.id));
    for (const cell of cells.filter((each) => !busy(each))) await cell.run();
  }

  /** D: stops the cells of the current slide that run or wait (or, if none, whichever runs). */
  stopCurrent() {
    if (this.mirrorClient) {
      this.mirrorClient.send(MIRROR_TO_DECK.STOP_SLIDE, {});
      return;
    }
    if (!this.runtime) return;
    const busy = (cell) => this.runtime.isRunning(cell.id) || this.runtime.isQueued(cell.id);
    const here = this.cellsIn(this.reveal && this.reveal.getCurrentSlide()).filter(busy);
    (here.length ? here : Array.from(this.cells.values()).filter(busy)).forEach((cell) => cell.stop());
  }

  /** E: runs the cells of the current slide, in order (the status chip's «Ejecutar la diapositiva»). */
  runSlide() {
    if (this.mirrorClient) {
      this.mirrorClient.send(MIRROR_TO_DECK.RUN_SLIDE, {});
      return;
    }
    const tools = this.reveal && this.reveal.getPlugin("dpdeck-tools");
    if (tools && tools.runSlide) tools.runSlide();
    else this.cellsIn(this.reveal && this.reveal.getCurrentSlide()).forEach((cell) => cell.run());
  }

  /** R: the edited cells of the current slide back to their original code; a moment to undo it. */
  resetSlide() {
    if (this.mirrorClient) {
      this.mirrorClient.send(MIRROR_TO_DECK.RESET_SLIDE, {});
      return;
    }
    this.restore(this.cellsIn(this.reveal && this.reveal.getCurrentSlide()));
  }

  /** The cells the speaker view should show as they are here, as plain data (mirror.js). */
  mirroredCells() {
    return Array.from(this.cells.values(), (cell) => cell.describeForMirror()).filter(Boolean);
  }

  enhance(element) {
    if (element.dataset.enhanced) return;
    const id = element.dataset.cellId;
    try {
      const cell = new Cell(element, {
        runtime: this.runtime,
        store: this.store,
        savedOutputs: this.savedOutputs,
        readOnly: isPrintPdf || isReceiver,
        unavailableMessage: this.unavailableMessage,
        unavailableNote: isFilePage ? FILE_PAGE_CELL_NOTE : "",
        settings: this.settings,
        report: this.mirrorHost ? (type, detail) => this.mirrorHost.tell(id, type, detail) : undefined,
        remote: this.mirrorClient && this.mirrorClient.connected && isCurrentPreview ? this.mirrorClient.remote : null,
      });
      this.cells.set(cell.id, cell);
      // An edit or a saved run it came back with: the speaker view, if open, shows it too.
      const mirrored = this.mirrorHost && cell.describeForMirror();
      if (mirrored) this.mirrorHost.tell(id, MIRROR_TO_SPEAKER.CELLS, { cells: [mirrored] });
      // Other plugins (exercises, cell tools) add their part to a cell once it has its editor.
      element.dispatchEvent(new CustomEvent("cell-ready", { bubbles: true, detail: { id: cell.id } }));
    } catch (error) {
      // One broken cell must not take the others (or the slides) with it.
      console.error(`celda ${element.dataset.cellId}:`, error);
    }
  }

  /** The live cell with this id, enhanced now if it was waiting for its turn (enhanceLater); null if none. */
  cellById(id) {
    if (!this.cells.has(id) && this.reveal) {
      const element = document.querySelector(`.cell[data-cell-id="${CSS.escape(id)}"]`);
      if (element) this.enhance(element);
    }
    return this.cells.get(id) || null;
  }

  enhanceSlide(slide) {
    if (slide) slide.querySelectorAll(".cell[data-cell-id]").forEach((element) => this.enhance(element));
  }

  /**
   * The cells not on screen, a batch at a time when the page is idle — but not
   * while Python boots or a cell runs: an editor costs the page's thread tens of
   * milliseconds, and on a laptop with two cores that time is taken from
   * Python's start (about half a second of it in all) or from the cell's result.
   */
  enhanceLater(elements) {
    if (this.runtime && (this.runtime.state === PYTHON_STATE.LOADING || this.runtime.busy)) {
      this.whenPythonQuiet(() => this.enhanceLater(elements));
      return;
    }
    const batch = elements.splice(0, this.settings.cellsPerIdleBatch);
    batch.forEach((element) => this.enhance(element));
    if (elements.length) {
      whenIdle(() => this.enhanceLater(elements));
    } else {
      this.root.dataset.cells = "ready";
      this.updateRestoreButton();
    }
  }

  /** Calls `then` when the page is idle, once Python has been quiet (PythonRuntime.afterQuiet) for cellsAfterPythonMs. */
  whenPythonQuiet(then) {
    // enhanceLater looks again: a run started meanwhile makes it wait for the next quiet moment.
    this.runtime.afterQuiet(this.settings.cellsAfterPythonMs, () => whenIdle(then));
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
    if (!this.settings.autorun || !autorunEnabled || !this.reveal) return;
    for (const cell of this.cellsIn(this.reveal.getCurrentSlide())) {
      // A cell that asks for a prediction keeps its output hidden until someone runs it (predictions.js).
      if (cell.element.matches("[data-predict]:not([data-revealed])")) continue;
      if (!cell.edited && !this.runtime.isQueued(cell.id) && !this.runtime.isRunning(cell.id)) cell.run();
    }
  }

  /** An edit the browser could not save: said once, with the code offered as a file. */
  tellUnsaved(cellId) {
    const cell = this.cells.get(cellId);
    if (!this.toast || !cell) return;
    this.toast.show(
      `No se pudo guardar tu edición de la celda ${cellId}: el almacenamiento de este navegador está lleno ` +
        "o desactivado, y se perderá al cerrar la página.",
      { actionText: "Descargar .py", actionName: "download-cell", action: () => cell.download(),
        durationMs: this.settings.unsavedNoticeMs },
    );
  }

  /** Every edited cell back to its original code; for a while, one click undoes it. */
  restoreAll() {
    this.restore(this.cells.values());
  }

  restore(cells) {
    const restored = [];
    for (const cell of cells) {
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
      durationMs: this.settings.undoRestoreMs,
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

  /**
   * The lab of the class with the challenge's answer (dpdeck.exercises.export_lab):
   * {verdict, json, filename}; {notice} when Python could not run it; null without Python.
   */
  async lab({ seed, extension }) {
    if (!this.runtime || this.unavailableMessage) return this.unavailableMessage ? { notice: this.unavailableMessage } : null;
    const result = await this.runtime.run(LAB_KEY, "", { type: REQUEST.LAB, payload: { seed, extension } });
    return result && result.verdict ? result : { notice: (result && result.notice) || "El laboratorio no terminó." };
  }

  /** Python's state, boot timings and counters, as plain data. */
  describePython() {
    const runtime = this.runtime;
    if (!runtime) return { state: PYTHON_STATE.OFF, timings: null, stats: null, inheritsPolicy: null };
    return {
      state: runtime.state,
      timings: runtime.timings ? JSON.parse(JSON.stringify(runtime.timings)) : null,
      stats: { ...runtime.stats },
      // The worker started from a blob: URL and so runs under the page's policy.
      inheritsPolicy: !runtime.plainWorker,
    };
  }
}

/** What a script may do with one cell (deck/README.md): its code, and its buttons. */
function scriptedCell(cell) {
  return Object.freeze({
    id: cell.id,
    /** The code in the editor now. */
    get source() {
      return cell.source;
    },
    /** Replaces the code, as one undoable edit, and saves it. */
    setSource: (source) => cell.setSource(source),
    /** What ▶ does; resolves with the run's result (plain data), or null where Python cannot run. */
    run: () => cell.run(),
    /** What «Comprobar» does on an exercise's cell: the run's result with the check's `verdict`. */
    check: () => cell.run({ check: cell.element.closest("[data-check]")?.dataset.check || null }),
    /** Whether its code differs from the original (saved in this browser). */
    get edited() {
      return cell.edited;
    },
    /** What ■ does. */
    stop: () => cell.stop(),
    /** What ↺ does. */
    reset: () => cell.reset(),
  });
}

/** The plugin, listed in main.js; reveal calls init(reveal) before it starts. */
export function LiveCells() {
  let deck = null;
  return {
    id: "dpdeck",
    init(reveal) {
      deck = new LiveDeck({ ...defaults.dpdeck, ...reveal.getConfig().dpdeck });
      reveal.on("ready", () => deck.start(reveal));
      reveal.addKeyBinding({ keyCode: D_KEY, key: "D", description: "Detener las celdas de esta diapositiva" }, () =>
        deck.stopCurrent(),
      );
      // reveal ignores Enter with a modifier: the deck's own listener, for the slide's cells.
      document.addEventListener("keydown", (event) => {
        if (event.key !== "Enter" || !(event.shiftKey || event.ctrlKey || event.metaKey) || event.altKey) return;
        if (event.defaultPrevented || isPrintPdf || isReceiver) return;
        if (event.target.closest && event.target.closest(OWN_ENTER)) return;
        event.preventDefault();
        deck.runFromKeys(event);
      });
      reveal.addKeyBinding({ keyCode: E_KEY, key: "E  ,  Mayús + Intro", description: "Ejecutar las celdas de esta diapositiva" }, () =>
        deck.runSlide(),
      );
      reveal.addKeyBinding(
        { keyCode: R_KEY, key: "R", description: "Volver al código original las celdas de esta diapositiva (se puede deshacer)" },
        () => deck.resetSlide(),
      );
    },
    /** The cell with this id (given its editor now if its slide has not been shown yet); null if there is none. */
    cell(id) {
      const cell = deck && deck.cellById(id);
      return cell ? scriptedCell(cell) : null;
    },
    /** Python's state (off | loading | ready | error), its boot timings and its counters. */
    get python() {
      return deck ? deck.describePython() : null;
    },
    /** The lab with the challenge's answer: {verdict, json, filename}, {notice}, or null without Python. */
    lab: (request) => (deck ? deck.lab(request) : Promise.resolve(null)),
    /**
     * Calls `then` once Python has been quiet for `ms` (PythonRuntime.afterQuiet;
     * `readyOnly`: and ready); never where this page runs no Python. Returns a
     * function that cancels the wait.
     */
    afterPythonQuiet: (ms, then, options) =>
      deck && deck.runtime ? deck.runtime.afterQuiet(ms, then, options) : () => {},
    /** Where this deck keeps its edits (storage.js), for the other plugins of the page. */
    get store() {
      return deck ? deck.store : null;
    },
    /** Saved outputs of edited cells (savedoutputs.js), for the notebook a student downloads. */
    get savedOutputs() {
      return deck ? deck.savedOutputs : null;
    },
    /** Adds a deck-wide button to the status chip (the other plugins' actions); null where there is no chip. */
    addAction: (spec) => (deck && deck.status ? deck.status.addButton(spec) : null),
    /**
     * Asks in the status chip before a long action ({action, question, yes,
     * onYes, returnFocus}: StatusPanel.confirm); without a chip, does it.
     */
    confirmAction: (spec) => (deck && deck.status ? deck.status.confirm(spec) : spec.onYes()),
    /** How many cells have code edited in this browser. */
    get editedCells() {
      return deck ? Array.from(deck.cells.values()).filter((cell) => cell.edited).length : 0;
    },
    /** What «Restaurar todo» does: every edited cell back to its original code (undoable for a while). */
    restoreAll: () => deck && deck.restoreAll(),
    /** Shows a short message at the bottom of the window, with a button that closes it. */
    notify: (text) => deck && deck.toast && deck.toast.show(text, {
      actionText: "Entendido", actionName: "dismiss", durationMs: deck.settings.noticeMs,
    }),
    /** Ids of the cells that have their editor, in page order. */
    get cellIds() {
      if (!deck) return [];
      return Array.from(document.querySelectorAll(".cell[data-cell-id]"), (element) => element.dataset.cellId)
        .filter((id) => deck.cells.has(id));
    },
  };
}
