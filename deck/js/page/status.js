// The Python status indicator: a small chip in the bottom-left corner, inside
// the band below the slides' content (the slide's bottom padding), so it never
// covers slide text. It says "Cargando Python… 12/26 MB" with a progress bar,
// then "Python listo"; pointing at it or tabbing to it shows the deck-wide
// buttons and any details. A failed boot needs attention: the chip then says
// what failed with a retry button and a ✕ that dismisses it, still on one line
// in the band below the slide's content (the details open only when asked).

import { BOOT_STAGE } from "../shared/protocol.js";
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
  "archivo solo muestran los resultados pre-calculados. En la carpeta del proyecto: " +
  "«python3 build.py serve». O dentro de la carpeta del mazo (la que tiene index.html): " +
  "«python3 -m http.server» y abre http://localhost:8000/.";

export class StatusPanel {
  constructor({ onRetry, onRestart, onRestoreAll, onDownload, onDecline }) {
    const panel = document.createElement("div");
    panel.className = "python-status";
    panel.setAttribute("role", "status");
    panel.setAttribute("aria-live", "polite");
    // Focusable, so the keyboard reaches the buttons that a compact chip hides.
    panel.tabIndex = 0;
    this.text = document.createElement("span");
    this.text.className = "python-status-text";
    this.detail = document.createElement("span");
    this.detail.className = "python-status-detail";
    this.bar = document.createElement("progress");
    this.bar.className = "python-status-bar";
    this.bar.max = 1;
    this.bar.value = 0;
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
    panel.append(
      this.bar,
      this.text,
      this.detail,
      this.retryButton,
      this.restartButton,
      this.restoreButton,
      this.downloadButton,
      this.declineButton,
      this.dismissButton,
    );
    // Clicks and keys on the panel are not slide navigation.
    panel.addEventListener("keydown", (event) => event.stopPropagation());
    this.panel = panel;
    document.body.appendChild(panel);
  }

  makeButton(action, text, title, handler) {
    const element = document.createElement("button");
    element.type = "button";
    element.className = "python-status-button";
    element.dataset.action = action;
    element.textContent = text;
    element.title = title;
    element.addEventListener("click", () => handler());
    return element;
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
    this.panel.appendChild(button);
    return button;
  }

  /** The size of Python's download, shown on the download button once known. */
  setDownloadSize(megabytes) {
    this.downloadButton.textContent = megabytes ? `Descargar (${megabytes} MB)` : "Descargar";
  }

  /** The failure notice goes back to a plain chip; its buttons stay a point or a Tab away. */
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
