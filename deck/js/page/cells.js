// Live cells: each `.cell` of the page gets an editor, run / stop / reset
// buttons, a status, saved edits and live outputs (the output area itself
// belongs to its LiveOutput).

import { announce } from "./announcer.js";
import { ZOOM_REQUEST } from "./cellzoom.js";
import { downloadPython } from "./downloads.js";
import { createEditor, replaceSource } from "./editor.js";
import { LiveOutput } from "./outputs.js";
import { CELL_STATUS, MIRROR_TO_SPEAKER, REQUEST, RUN_STATUS } from "../shared/protocol.js";
import { RUN_CANCELLED } from "./python.js";

const STATUS_TEXT = {
  [CELL_STATUS.IDLE]: "",
  [CELL_STATUS.QUEUED]: "En cola",
  [CELL_STATUS.RUNNING]: "Ejecutando…",
  [CELL_STATUS.DONE]: "Hecho",
  [CELL_STATUS.ERROR]: "Error",
  [CELL_STATUS.STOPPED]: "Detenida",
};
// A finished run's status is the cell's status.
const FINISHED = new Set([RUN_STATUS.DONE, RUN_STATUS.ERROR, RUN_STATUS.STOPPED]);
// Keys that a focused toolbar button uses itself; they must not also move the slides.
const BUTTON_KEYS = new Set([" ", "Enter", "Spacebar"]);

const EDITED_TITLE = "El código de esta celda tiene cambios tuyos (guardados en este navegador)";
const UNSAVED_TEXT = "sin guardar";
const UNSAVED_TITLE =
  "Este navegador no pudo guardar tu edición (su almacenamiento está lleno o desactivado): " +
  "si cierras o recargas la página, se perderá. Descárgala como .py para conservarla.";

// The symbol before the word is for the eye only: hidden from screen readers,
// and so from reveal.js's live region, which copies the slide's text. Copied
// there, it asked for the symbols' fallback face (DejaVu Sans, 254 kB) whenever
// the buttons happened to exist before the slide was announced.
function button(action, icon, text, title, onPress) {
  const element = document.createElement("button");
  element.type = "button";
  element.className = `cell-button cell-${action}`;
  element.dataset.action = action;
  if (icon) {
    const symbol = document.createElement("span");
    symbol.setAttribute("aria-hidden", "true");
    symbol.textContent = icon;
    element.append(symbol);
  }
  if (text) element.append(icon ? ` ${text}` : text);
  element.title = title;
  element.addEventListener("click", (event) => {
    // Clicked with a pointer (a keyboard press has no click count): the keys
    // go back to the slides, so Space and → move on as everywhere in reveal.
    if (event.detail > 0) element.blur();
    onPress();
  });
  return element;
}

const SVG = "http://www.w3.org/2000/svg";

/**
 * The zoom button's icon, four corners of a square, drawn rather than typed:
 * no font the deck ships has a glyph for it (⛶ would be an empty box).
 */
function zoomIcon() {
  const icon = document.createElementNS(SVG, "svg");
  icon.setAttribute("viewBox", "0 0 16 16");
  icon.setAttribute("aria-hidden", "true");
  icon.setAttribute("focusable", "false");
  icon.classList.add("cell-zoom-icon");
  const corners = document.createElementNS(SVG, "path");
  corners.setAttribute("d", "M1.5 5.5v-4h4M10.5 1.5h4v4M14.5 10.5v4h-4M5.5 14.5h-4v-4");
  corners.setAttribute("fill", "none");
  corners.setAttribute("stroke", "currentColor");
  corners.setAttribute("stroke-width", "1.8");
  icon.append(corners);
  return icon;
}

export class Cell {
  /** settings: the deck's settings (config.js: saveDelayMs, streamAfterMs, recomputingMarkAfterMs). */
  /**
   * savedOutputs: where the last live output of an edited cell is kept
   * (savedoutputs.js), or null; unavailableMessage: why Python cannot run here
   * (a file page), shown when ▶ is pressed; unavailableNote: the same in a few
   * words, beside ▶. report(type, detail): told what the cell shows as it
   * changes (mirror.js passes it on to the speaker view). remote: in a
   * speaker view's preview, {run, stop, reset}(id) ask the deck's window to do
   * it (its buttons are shown; the code stays read-only).
   */
  constructor(element, { runtime, store, savedOutputs = null, readOnly, unavailableMessage, unavailableNote = "",
    settings, report = () => {}, remote = null }) {
    this.element = element;
    this.id = element.dataset.cellId;
    this.runtime = runtime;
    this.readOnly = readOnly;
    this.report = report;
    this.remote = remote;
    this.store = store;
    this.unavailableMessage = unavailableMessage;
    this.unavailableNote = unavailableNote;
    this.saveDelayMs = settings.saveDelayMs;
    const code = element.querySelector(".cell-source code") || element.querySelector(".cell-source");
    this.original = code ? code.textContent : "";
    this.output = new LiveOutput(element, this.id, settings);
    this.savedOutputs = readOnly ? null : savedOutputs;
    this.saveTimer = null;
    // The code the shown output belongs to (the pre-computed output is the original's).
    this.lastRunSource = this.original;

    const saved = readOnly ? null : store.load(this.id);
    const source = saved !== null && saved !== this.original ? saved : this.original;
    this.buildToolbar(readOnly);
    this.editorHost = document.createElement("div");
    this.editorHost.className = "cell-editor";
    if (!readOnly) this.makeEditingExplicit();
    const sourceElement = element.querySelector(".cell-source");
    if (sourceElement) {
      sourceElement.before(this.editorHost);
      sourceElement.hidden = true;
    } else {
      element.prepend(this.editorHost);
    }
    this.view = createEditor(this.editorHost, {
      source,
      readOnly,
      label: `Código de la celda ${this.id}`,
      onRun: () => this.run(),
      onChange: (text) => this.onEdit(text),
      onLeave: () => (this.toolbar.hidden ? this.editorHost : this.runButton).focus(),
    });
    // An edited cell comes back with the output of its last run in this browser.
    const savedRun = source !== this.original && this.savedOutputs ? this.savedOutputs.load(this.id) : null;
    if (savedRun) {
      this.output.showSaved(savedRun);
      this.lastRunSource = savedRun.source;
    }
    this.markEdited(source !== this.original);
    this.output.setStale(source !== this.lastRunSource);
    this.isolateKeys();
    element.dataset.enhanced = "true";
  }

  buildToolbar(readOnly) {
    const toolbar = document.createElement("div");
    toolbar.className = "cell-toolbar";
    this.runButton = button("run", "▶", "Ejecutar", "Ejecutar la celda (Mayús+Intro o Ctrl+Intro)", () => this.run());
    // Pressed from the keyboard, ▶ hands the focus to the cell's code: there Space is the
    // slides' key again (on ▶ it would run the cell once more), Enter edits, Shift+Enter runs.
    this.runButton.addEventListener("click", (event) => {
      if (event.detail === 0 && this.editorHost && this.editorHost.tabIndex === 0) this.editorHost.focus();
    });
    this.stopButton = button("stop", "■", "Detener", "Detener la ejecución", () => this.stop());
    this.resetButton = button("reset", "↺", "Original", "Volver al código original (se puede deshacer con Ctrl+Z)", () =>
      this.reset(),
    );
    this.downloadButton = button("download", "⤓", ".py", "Descargar el código de esta celda como archivo .py", () =>
      this.download(),
    );
    this.downloadButton.hidden = true;
    this.zoomButton = button("zoom", "", "", "Ampliar la celda (Z)", () =>
      this.element.dispatchEvent(new CustomEvent(ZOOM_REQUEST, { bubbles: true })),
    );
    this.zoomButton.append(zoomIcon());
    this.zoomButton.setAttribute("aria-label", "Ampliar la celda");
    // Shown, not spoken: the page's one live region says how each run ended (announcer.js).
    this.statusElement = document.createElement("span");
    this.statusElement.className = "cell-status";
    this.editedElement = document.createElement("span");
    this.editedElement.className = "cell-edited";
    this.editedElement.textContent = "editada";
    this.editedElement.title = EDITED_TITLE;
    toolbar.append(this.runButton, this.stopButton, this.resetButton, this.editedElement, this.downloadButton,
      this.statusElement, this.zoomButton);
    if (readOnly && !this.remote) toolbar.hidden = true;
    if (this.unavailableNote) {
      // ▶ looks disabled and says why in one line; pressed anyway, it explains
      // how to get Python (so it stays a working button, described by the note).
      this.runButton.dataset.unavailable = "";
      this.runButton.title = this.unavailableNote;
      this.statusElement.classList.add("cell-unavailable");
      this.statusElement.id = `celda-${this.id}-sin-python`;
      this.runButton.setAttribute("aria-describedby", this.statusElement.id);
    }
    this.element.prepend(toolbar);
    this.toolbar = toolbar;
    this.setStatus(this.element.dataset.status || CELL_STATUS.IDLE);
  }

  /**
   * The code is a focus stop of its own (a group named after the cell): Tab
   * stops there and moves on, and only Enter starts editing. The editable area
   * itself is out of the Tab order (editor.js).
   */
  makeEditingExplicit() {
    const host = this.editorHost;
    host.tabIndex = 0;
    host.setAttribute("role", "group");
    host.setAttribute("aria-label", `Código de la celda ${this.id}: Intro para editarlo, Esc para salir`);
    host.addEventListener("keydown", (event) => {
      if (event.target !== host || event.key !== "Enter" || event.shiftKey || event.ctrlKey || event.metaKey) return;
      event.preventDefault();
      event.stopPropagation();
      this.view.focus();
    });
  }

  // Keys typed in the editor (and Space/Enter on a toolbar button) belong to
  // the cell: they must never reach reveal.js, which listens on the document.
  isolateKeys() {
    const stop = (event) => {
      const inEditor = this.view.contentDOM.contains(event.target);
      const onButton = this.toolbar.contains(event.target) && BUTTON_KEYS.has(event.key);
      if (inEditor || onButton) event.stopPropagation();
    };
    for (const type of ["keydown", "keypress", "keyup"]) this.element.addEventListener(type, stop);
  }

  get source() {
    return this.view.state.doc.toString();
  }

  get edited() {
    return this.source !== this.original;
  }

  onEdit(text) {
    this.markEdited(text !== this.original);
    this.output.setStale(text !== this.lastRunSource);
    // A read-only view (the speaker view's preview, the print view) shows another window's edits: never saves them.
    if (this.readOnly) return;
    this.report(MIRROR_TO_SPEAKER.SOURCE, { source: text });
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => this.persist(), this.saveDelayMs);
  }

  /** What the deck's window shows (a preview of the speaker view): its code, as it is there. */
  showSource(source) {
    if (source !== this.source) replaceSource(this.view, source);
  }

  /** A run the deck's window started, shown here as it happens (the speaker view's preview). */
  showRunStart() {
    this.lastRunSource = this.source;
    this.output.setStale(false);
    this.output.begin();
  }

  /** …and the output it ended with. */
  async showRunEnd(shown) {
    await this.output.finish(shown.result, { origin: shown.origin });
    this.output.setStale(this.source !== this.lastRunSource);
  }

  persist() {
    clearTimeout(this.saveTimer);
    this.saveTimer = null;
    if (this.edited) {
      this.markSaved(this.store.save(this.id, this.source));
    } else {
      this.store.forget(this.id);
      this.savedOutputs?.forget(this.id);
      this.markSaved(true);
    }
  }

  /** Keeps the last run of edited code for the next visit; says so when the browser has no room. */
  saveOutput(source, result) {
    if (!this.savedOutputs || !FINISHED.has(result.status)) return;
    if (source === this.original || (!(result.outputs || []).length && result.notice)) {
      if (source === this.original) this.savedOutputs.forget(this.id);
      return;
    }
    const { saved, figuresDropped } = this.savedOutputs.save(this.id, source, result);
    // An edit that could not be saved already says so (markSaved): its output goes with it.
    if ((!saved || figuresDropped) && !this.element.hasAttribute("data-unsaved")) {
      this.element.dispatchEvent(new CustomEvent("cell-output-not-saved", {
        bubbles: true,
        detail: { id: this.id, saved, figuresDropped },
      }));
    }
  }

  /**
   * Whether the edit is kept in this browser. When it is not, the badge says
   * «sin guardar», a download button appears, and the deck is told once
   * ("cell-unsaved") so it can say it aloud.
   */
  markSaved(saved) {
    const wasUnsaved = this.element.hasAttribute("data-unsaved");
    this.element.toggleAttribute("data-unsaved", !saved);
    this.editedElement.textContent = saved ? "editada" : UNSAVED_TEXT;
    this.editedElement.title = saved ? EDITED_TITLE : UNSAVED_TITLE;
    this.downloadButton.hidden = saved;
    if (!saved && !wasUnsaved) {
      this.element.dispatchEvent(new CustomEvent("cell-unsaved", { bubbles: true, detail: { cellId: this.id } }));
    }
  }

  /** The code in the editor as a file, `<cell id>.py`. */
  download() {
    downloadPython(this.id, this.source);
  }

  /** Saves a pending edit now (the page is being left). */
  flushSave() {
    if (this.saveTimer !== null) this.persist();
  }

  markEdited(edited) {
    this.element.toggleAttribute("data-edited", edited);
    this.element.dispatchEvent(new CustomEvent("cell-edited", { bubbles: true }));
  }

  setStatus(status) {
    if (status !== this.element.dataset.status) this.report(MIRROR_TO_SPEAKER.STATUS, { status });
    this.element.dataset.status = status;
    this.statusElement.textContent =
      status === CELL_STATUS.IDLE && this.unavailableNote ? this.unavailableNote : STATUS_TEXT[status] ?? "";
    const busy = status === CELL_STATUS.RUNNING || status === CELL_STATUS.QUEUED;
    this.stopButton.disabled = !busy;
  }

  /**
   * Queues this cell's current code; resolves when it has run (or was cancelled).
   * With `check` (a name in dpdeck.exercises.CHECKS) it is «Comprobar»: the
   * result also carries the check's `verdict`.
   */
  async run({ check = null } = {}) {
    if (this.remote) {
      this.remote.run(this.id);
      return null;
    }
    if (!this.runtime || this.unavailableMessage) {
      // Print view and speaker view have no Python; a file page says how to get it.
      if (!this.unavailableMessage) return null;
      await this.output.finish({ status: RUN_STATUS.ERROR, outputs: [], notice: this.unavailableMessage });
      return null;
    }
    this.persist();
    this.fitToSlide();
    const source = this.source;
    this.lastRunSource = source;
    this.output.setStale(false);
    this.setStatus(CELL_STATUS.QUEUED);
    const result = await this.runtime.run(this.id, source, {
      onStart: () => {
        this.setStatus(CELL_STATUS.RUNNING);
        this.output.begin();
        this.report(MIRROR_TO_SPEAKER.BEGIN, {});
      },
      onStream: (chunks) => {
        this.output.appendStreams(chunks);
        this.report(MIRROR_TO_SPEAKER.STREAM, { chunks });
      },
      ...(check ? { type: REQUEST.CHECK, payload: { check } } : {}),
    });
    if (result.status === RUN_CANCELLED) {
      // Dropped from the queue: back to what it showed before.
      if (this.runtime.isQueued(this.id) || this.runtime.isRunning(this.id)) return result;
      this.setStatus(this.output.shownStatus());
      return result;
    }
    await this.output.finish(result);
    if (this.output.shown) this.report(MIRROR_TO_SPEAKER.FINISH, { shown: this.output.shown });
    this.saveOutput(source, result);
    const status = FINISHED.has(result.status) ? result.status : CELL_STATUS.ERROR;
    this.setStatus(status);
    announce(`Celda ${this.id}: ${STATUS_TEXT[status].toLowerCase()}. ${this.output.describe()}`.trim());
    // How many runs this cell has finished: lets a script wait for the next one.
    this.element.dataset.runs = String(Number(this.element.dataset.runs || 0) + 1);
    this.element.dispatchEvent(new CustomEvent("cell-ran", { bubbles: true, detail: { id: this.id, status } }));
    return result;
  }

  stop() {
    if (this.remote) this.remote.stop(this.id);
    else if (this.runtime) this.runtime.stop(this.id);
  }

  /** Back to the original code, as one undoable edit. */
  reset() {
    if (this.remote) {
      this.remote.reset(this.id);
      return;
    }
    if (!this.edited) return;
    this.setSource(this.original);
  }

  /** What the speaker view needs to show this cell as it is here: plain data, or null when it shows the build's. */
  describeForMirror() {
    const status = this.element.dataset.status;
    if (!this.edited && !this.output.shown && status === CELL_STATUS.IDLE) return null;
    return { id: this.id, source: this.edited ? this.source : null, status, shown: this.output.shown };
  }

  /** Replaces the code (one undoable edit) and saves it at once. */
  setSource(source) {
    replaceSource(this.view, source);
    this.persist();
  }

  /** Re-measures the editor after its slide becomes visible (reveal scales slides). */
  refresh() {
    this.view.requestMeasure();
    this.fitToSlide();
  }

  /** The room the cell has changed (slide shape, code size, zoom): measure and fit again. */
  refit() {
    this.fitted = false;
    this.element.style.maxHeight = "";
    this.view.requestMeasure();
    const slide = this.element.closest("section");
    if (slide && slide.classList.contains("present")) this.fitToSlide();
  }

  /**
   * Caps the cell, once, at the height it has now (with its pre-computed
   * output) plus the free room between the slide's content and the slide's
   * bottom padding. A long live output then scrolls inside the cell instead of
   * pushing the text after it off the slide. Needs the slide laid out: on
   * screen, not in the overview, its figures loaded.
   */
  fitToSlide() {
    if (this.fitted) return;
    const slide = this.element.closest("section");
    if (!slide || document.querySelector(".reveal.overview")) return;
    if (!this.output.figuresLoaded(() => this.fitToSlide())) return;
    const slideBox = slide.getBoundingClientRect();
    if (!slideBox.height || !slide.offsetHeight) return;
    // Window pixels per slide pixel (reveal scales the 1280×720 slide to the window).
    const scale = slideBox.height / slide.offsetHeight;
    const bottomLimit = slideBox.bottom - parseFloat(getComputedStyle(slide).paddingBottom || "0") * scale;
    let contentBottom = slideBox.top;
    for (const child of slide.children) {
      if (child.matches("aside.notes")) continue;
      const box = child.getBoundingClientRect();
      if (box.height) contentBottom = Math.max(contentBottom, box.bottom);
    }
    const room = Math.max(0, (bottomLimit - contentBottom) / scale);
    const height = this.element.getBoundingClientRect().height / scale;
    const cssLimit = parseFloat(getComputedStyle(this.element).maxHeight);
    const limit = Math.ceil(height + room);
    this.element.style.maxHeight = `${Number.isFinite(cssLimit) ? Math.min(cssLimit, limit) : limit}px`;
    this.fitted = true;
  }
}
