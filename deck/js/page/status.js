// The Python status indicator: a small chip in the bottom-left corner, inside
// the band below the slides' content (the slide's bottom padding), so it never
// covers slide text. It says "Cargando Python… 12/26 MB" with a progress bar,
// then "Python listo". Its text is a button that opens it, with the deck-wide
// buttons and the details; pointing at it with a mouse opens it too. Opening
// never moves what is under a finger or the pointer: a tap on «Descargar» on
// the closed chip downloads, and Tab never reaches a button the closed chip
// hides. On a phone or an upright tablet the open chip is a sheet along the
// bottom that the slides make room for, so it covers nothing. A failed boot
// needs attention: the chip then says what failed with a retry button and a
// ✕ that dismisses it, still in the band below the slide's content.

import { BOOT_STAGE } from "../shared/protocol.js";
import { LAYOUT, LAYOUT_CHANGED } from "./layout.js";
import { PYTHON_STATE, WORKER_STEP } from "./python.js";

const MB = 1e6;
// What each boot stage of the worker loads, to say what failed.
const STEP_LABELS = {
  [WORKER_STEP]: "el worker de Python (js/worker.js)",
  [BOOT_STAGE.RUNTIME]: "la lista de archivos (runtime.json)",
  [BOOT_STAGE.CORE]: "el intérprete de Python (pyodide/)",
  [BOOT_STAGE.PACKAGES]: "los paquetes numpy y matplotlib",
  [BOOT_STAGE.WHEEL]: "el paquete dpdeck (wheels/)",
  [BOOT_STAGE.WARMUP]: "la preparación de Python",
};

// The core stage once its downloads are in: Pyodide compiles and starts the
// interpreter. Only the chip tells it apart (data-stage="compile").
const COMPILE_STAGE = "compile";

// What the chip says during each boot stage (worker/boot.js), so it never sits on a
// frozen byte count while Python compiles or imports.
const STAGE_TEXT = {
  [BOOT_STAGE.RUNTIME]: "Cargando Python…",
  [BOOT_STAGE.CORE]: "Cargando Python…",
  [COMPILE_STAGE]: "Preparando el intérprete…",
  [BOOT_STAGE.PACKAGES]: "Cargando numpy y matplotlib…",
  [BOOT_STAGE.WHEEL]: "Instalando dpdeck…",
  [BOOT_STAGE.WARMUP]: "Importando numpy, matplotlib y dpdeck…",
  [BOOT_STAGE.READY]: "Python listo",
};
// Stages that are mostly downloads: their text carries the byte count.
const COUNTED_STAGES = new Set([BOOT_STAGE.RUNTIME, BOOT_STAGE.CORE, BOOT_STAGE.PACKAGES]);

/** The boot stage a progress event describes (core without downloads: compiling). */
function bootStage(progress) {
  if (!progress || !progress.step) return BOOT_STAGE.RUNTIME;
  if (progress.step === BOOT_STAGE.CORE && progress.downloading === false && progress.loaded > 0) return COMPILE_STAGE;
  return STAGE_TEXT[progress.step] ? progress.step : BOOT_STAGE.RUNTIME;
}

function formatMegabytes(bytes) {
  return (bytes / MB).toLocaleString("es-ES", { maximumFractionDigits: 0 });
}

export const FILE_PAGE_SUMMARY = "Sin Python: ábrelas desde un servidor («python3 build.py serve»)";

/** Beside each ▶ of a file page: why it does not run, in a few words. */
export const FILE_PAGE_CELL_NOTE = "Sin Python: ábrelas desde un servidor";

export const FILE_PAGE_MESSAGE =
  "Python necesita que las diapositivas se sirvan desde un servidor web; abiertas como " +
  "archivo solo muestran los resultados calculados al crear las diapositivas. En la " +
  "carpeta del proyecto: «python3 build.py serve». O dentro de la carpeta del mazo (la que tiene index.html): " +
  "«python3 -m http.server» y abre http://localhost:8000/.";

/** Whether pointing at the chip opens it: a mouse, on the slides (not on a phone's or tablet's pages). */
function pointingOpens(event) {
  return event.pointerType === "mouse" && document.documentElement.dataset.layout !== LAYOUT.REFLOW;
}

export class StatusPanel {
  constructor({ onRetry, onRestart, onRestoreAll, onDownload, onDecline }) {
    const panel = document.createElement("div");
    panel.className = "python-status";
    panel.id = "python-status";
    panel.setAttribute("role", "status");
    panel.setAttribute("aria-live", "polite");
    this.bar = document.createElement("progress");
    this.bar.className = "python-status-bar";
    this.bar.max = 1;
    this.bar.value = 0;
    // The text is the button that opens the chip (the one Tab stop of the closed chip).
    this.toggle = document.createElement("button");
    this.toggle.type = "button";
    this.toggle.className = "python-status-toggle";
    this.toggle.dataset.action = "open-status";
    this.toggle.setAttribute("aria-expanded", "false");
    this.toggle.setAttribute("aria-controls", panel.id);
    this.text = document.createElement("span");
    this.text.className = "python-status-text";
    this.toggle.append(this.text);
    this.toggle.addEventListener("click", (event) => {
      // Clicked or tapped, the keys stay the slides' (a keyboard press keeps the focus here).
      if (event.detail > 0) this.toggle.blur();
      if (this.isOpen && this.pinned) this.close();
      else this.open();
    });
    this.detail = document.createElement("span");
    this.detail.className = "python-status-detail";
    this.retryButton = this.makeButton("retry", "Reintentar", "Volver a cargar Python", onRetry);
    this.restartButton = this.makeButton(
      "restart-python",
      "Reiniciar Python",
      "Empezar con un Python nuevo (las ediciones se conservan)",
      onRestart,
    );
    this.restoreButton = this.makeButton(
      "restore-all",
      "Restaurar todo",
      "Devolver todas las celdas a su código original (se puede deshacer durante unos segundos)",
      onRestoreAll,
    );
    this.dismissButton = this.makeButton("dismiss", "✕", "Cerrar el aviso (Python sigue sin cargar)", () =>
      this.dismiss(),
    );
    this.downloadButton = this.makeButton("download-python", "Descargar", "Descargar Python ahora", onDownload);
    this.declineButton = this.makeButton(
      "decline-python",
      "No descargar",
      "Detener la descarga de Python; este dispositivo no lo descargará al abrir las diapositivas",
      onDecline,
    );
    this.dismissButton.setAttribute("aria-label", "Cerrar el aviso");
    this.question = this.makeQuestion();
    this.closeButton = this.makeButton("close-status", "Cerrar", "Cerrar este panel (Esc)", () =>
      this.close({ focusToggle: true }),
    );
    this.closeButton.classList.add("python-status-close");
    panel.append(
      this.bar,
      this.toggle,
      this.detail,
      this.retryButton,
      this.restartButton,
      this.restoreButton,
      this.downloadButton,
      this.declineButton,
      this.dismissButton,
      this.question.element,
      this.closeButton,
    );
    this.panel = panel;
    this.isOpen = false;
    this.pinned = false;
    this.watchOpening();
    document.body.appendChild(panel);
  }

  makeButton(action, text, title, handler) {
    const element = document.createElement("button");
    element.type = "button";
    element.className = "python-status-button";
    element.dataset.action = action;
    element.textContent = text;
    element.title = title;
    element.addEventListener("click", (event) => {
      // Clicked or tapped (a keyboard press has no click count): the keys go back to the slides.
      if (event.detail > 0) element.blur();
      handler();
    });
    return element;
  }

  /** The row that asks before a long action (confirm): its question, «Sí» and «Cancelar». */
  makeQuestion() {
    const element = document.createElement("div");
    element.className = "python-status-question";
    element.hidden = true;
    const text = document.createElement("span");
    text.className = "python-status-question-text";
    const yes = this.makeButton("confirm", "", "", () => this.answer(true));
    const no = this.makeButton("cancel", "Cancelar", "No hacerlo", () => this.answer(false));
    yes.classList.add("python-status-confirm");
    element.append(text, yes, no);
    return { element, text, yes, no, onYes: null, returnFocus: null };
  }

  /**
   * Opening and closing: a click on the text (pinned open until closed), a
   * mouse pointing at the chip on the slides (open while it stays there); Esc,
   * «Cerrar», a click elsewhere or the focus leaving close it.
   */
  watchOpening() {
    const panel = this.panel;
    panel.addEventListener("pointerenter", (event) => pointingOpens(event) && this.open({ pinned: false }));
    panel.addEventListener("pointerleave", (event) => {
      if (pointingOpens(event) && !this.pinned && !panel.contains(document.activeElement)) this.close();
    });
    document.addEventListener(
      "pointerdown",
      (event) => this.isOpen && !panel.contains(event.target) && this.close(),
      true,
    );
    panel.addEventListener("focusout", (event) => {
      if (this.isOpen && event.relatedTarget && !panel.contains(event.relatedTarget)) this.close();
    });
    // Keys on the chip are not slide navigation; Esc closes it (the focus back on its text).
    panel.addEventListener("keydown", (event) => {
      event.stopPropagation();
      if (event.key === "Escape" && this.isOpen) {
        event.preventDefault();
        this.close({ focusToggle: true });
      }
    });
    // Open with the focus elsewhere (it was clicked), Esc closes it before it means anything else.
    document.addEventListener(
      "keydown",
      (event) => {
        if (event.key !== "Escape" || !this.isOpen || panel.contains(event.target)) return;
        event.preventDefault();
        event.stopPropagation();
        this.close();
      },
      true,
    );
    // On a phone the open chip is a sheet the slides make room for: its height, as it changes.
    this.sheetWatcher = new ResizeObserver(() => this.placeSheet());
    document.addEventListener(LAYOUT_CHANGED, () => this.placeSheet());
  }

  /** Opens the chip; `pinned`: it stays open until closed (otherwise, while the mouse is over it). */
  open({ pinned = true } = {}) {
    this.pinned = this.pinned || pinned;
    if (this.isOpen) return;
    this.isOpen = true;
    this.panel.toggleAttribute("data-open", true);
    this.toggle.setAttribute("aria-expanded", "true");
    this.sheetWatcher.observe(this.panel);
    this.placeSheet();
  }

  close({ focusToggle = false } = {}) {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.pinned = false;
    this.endQuestion();
    this.panel.removeAttribute("data-open");
    this.toggle.setAttribute("aria-expanded", "false");
    this.sheetWatcher.disconnect();
    this.placeSheet();
    if (focusToggle) this.toggle.focus();
    else if (this.panel.contains(document.activeElement) && !document.activeElement.checkVisibility()) {
      document.activeElement.blur();
    }
  }

  /**
   * The open chip on a page layout (a phone, an upright tablet) sits along the
   * bottom, and the slides end above it (<html data-status-sheet>, its height
   * in --dp-status-sheet): it covers no cell however the page is scrolled.
   */
  placeSheet() {
    const root = document.documentElement;
    const docked = this.isOpen && root.dataset.layout === LAYOUT.REFLOW;
    root.toggleAttribute("data-status-sheet", docked);
    if (docked) root.style.setProperty("--dp-status-sheet", `${Math.ceil(this.panel.offsetHeight)}px`);
    else root.style.removeProperty("--dp-status-sheet");
  }

  /**
   * Asks before a long action: the open chip shows `question` with `yes` and
   * «Cancelar», and the focus goes to «Cancelar», so an Enter by accident does
   * nothing. `action` names the buttons (data-action confirm-<action>,
   * cancel-<action>); `returnFocus` gets the focus back when it is cancelled.
   */
  confirm({ action, question, yes, onYes, returnFocus = null }) {
    this.open();
    const asked = this.question;
    asked.text.textContent = question;
    asked.yes.textContent = yes;
    asked.yes.title = question;
    asked.yes.dataset.action = `confirm-${action}`;
    asked.no.dataset.action = `cancel-${action}`;
    asked.onYes = onYes;
    asked.returnFocus = returnFocus;
    asked.element.hidden = false;
    asked.no.focus();
  }

  answer(yes) {
    const { onYes, returnFocus } = this.question;
    this.endQuestion();
    if (yes && onYes) onYes();
    else if (returnFocus && returnFocus.checkVisibility()) returnFocus.focus();
  }

  endQuestion() {
    const asked = this.question;
    asked.element.hidden = true;
    asked.onYes = null;
    asked.returnFocus = null;
  }

  /**
   * state: a PYTHON_STATE (off | loading | ready | error). For "off", `summary`
   * (one short line) and `detail` (shown when the chip opens) say why Python
   * is not there.
   */
  show(state, { progress, failure, summary = "", detail: extra = "", offer = false } = {}) {
    const panel = this.panel;
    // A new failure asks for attention again, even after an earlier one was dismissed.
    if (state === PYTHON_STATE.ERROR && panel.dataset.state !== PYTHON_STATE.ERROR) this.dismissed = false;
    panel.dataset.state = state;
    delete panel.dataset.stage;
    panel.toggleAttribute("data-attention", state === PYTHON_STATE.ERROR && !this.dismissed);
    this.dismissButton.hidden = state !== PYTHON_STATE.ERROR;
    // Python not downloaded (yet): the chip offers it, on its one line.
    panel.toggleAttribute("data-offer", state === PYTHON_STATE.OFF && offer);
    this.downloadButton.hidden = !(state === PYTHON_STATE.OFF && offer);
    this.declineButton.hidden = state !== PYTHON_STATE.LOADING;
    this.retryButton.hidden = state !== PYTHON_STATE.ERROR;
    this.restartButton.hidden = state !== PYTHON_STATE.READY;
    this.bar.hidden = state !== PYTHON_STATE.LOADING;
    let text = "";
    let detail = "";
    if (state === PYTHON_STATE.LOADING) {
      const loaded = progress ? progress.loaded : 0;
      // Until runtime.json has said how much there is, no count is shown.
      const total = progress && progress.total ? Math.max(progress.total, loaded) : 0;
      const stage = bootStage(progress);
      this.bar.value = total ? loaded / total : 0;
      text = STAGE_TEXT[stage];
      if (total && COUNTED_STAGES.has(stage)) text += ` ${formatMegabytes(loaded)}/${formatMegabytes(total)} MB`;
      panel.dataset.stage = stage;
    } else if (state === PYTHON_STATE.READY) {
      text = STAGE_TEXT[BOOT_STAGE.READY];
    } else if (state === PYTHON_STATE.ERROR) {
      const what = failure && STEP_LABELS[failure.step] ? `: falló ${STEP_LABELS[failure.step]}` : "";
      text = `No se pudo cargar Python${what}.`;
      detail = failure ? failure.message : "";
    } else {
      text = summary;
      detail = extra;
    }
    this.text.textContent = text;
    this.detail.textContent = detail;
    this.detail.hidden = !detail;
    panel.title = detail && state !== PYTHON_STATE.ERROR ? detail : "";
    panel.hidden = state === PYTHON_STATE.OFF && !summary;
  }

  setRestoreEnabled(enabled) {
    this.restoreButton.hidden = !enabled;
  }

  /**
   * Another deck-wide button (another plugin's): added after the chip's own,
   * shown only while the chip is open (a closed chip offering «Descargar» or
   * «Reintentar» keeps to those); returns it.
   */
  addButton({ action, text, title, onClick }) {
    const button = this.makeButton(action, text, title, onClick);
    button.classList.add("python-status-extra");
    this.panel.insertBefore(button, this.question.element);
    return button;
  }

  /** The size of Python's download, shown on the download button once known. */
  setDownloadSize(megabytes) {
    this.downloadButton.textContent = megabytes ? `Descargar (${megabytes} MB)` : "Descargar";
  }

  /** The failure notice goes back to a plain chip; its buttons stay a point or a click away. */
  dismiss() {
    this.dismissed = true;
    this.panel.removeAttribute("data-attention");
    if (this.panel.contains(document.activeElement)) document.activeElement.blur();
  }
}

/**
 * A short message at the bottom of the window, in the band below the slides'
 * content, with one button (for example «Deshacer»); it goes away by itself.
 */
export class Toast {
  constructor() {
    const element = document.createElement("div");
    element.className = "deck-toast";
    element.setAttribute("role", "status");
    element.setAttribute("aria-live", "polite");
    element.hidden = true;
    this.text = document.createElement("span");
    this.text.className = "deck-toast-text";
    this.button = document.createElement("button");
    this.button.type = "button";
    this.button.className = "deck-toast-button";
    this.button.addEventListener("click", () => {
      const action = this.action;
      this.hide();
      if (action) action();
    });
    element.append(this.text, this.button);
    // Space or Enter on its button is not slide navigation.
    element.addEventListener("keydown", (event) => event.stopPropagation());
    this.element = element;
    this.timer = null;
    this.action = null;
    document.body.appendChild(element);
  }

  show(text, { actionText, action, actionName = "", durationMs }) {
    clearTimeout(this.timer);
    this.text.textContent = text;
    this.button.textContent = actionText;
    this.button.dataset.action = actionName;
    this.action = action;
    this.element.hidden = false;
    this.timer = setTimeout(() => this.hide(), durationMs);
  }

  hide() {
    clearTimeout(this.timer);
    this.timer = null;
    this.action = null;
    this.element.hidden = true;
  }
}
