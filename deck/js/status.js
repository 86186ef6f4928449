// The Python status indicator: loading progress in megabytes, "Python listo",
// or what failed with a retry button; plus the deck-wide controls.

const MB = 1e6;
// What each boot step of the worker loads, to say what failed.
const STEP_LABELS = {
  worker: "el worker de Python (js/worker.js)",
  runtime: "la lista de archivos (runtime.json)",
  core: "el intérprete de Python (pyodide/)",
  packages: "los paquetes numpy y matplotlib",
  wheel: "el paquete dpdeck (wheels/)",
  warmup: "la preparación de Python",
};
const COMPACT_AFTER_MS = 4000;

function formatMegabytes(bytes) {
  return (bytes / MB).toLocaleString("es-ES", { maximumFractionDigits: 0 });
}

export const FILE_PAGE_MESSAGE =
  "Python necesita que las diapositivas se sirvan desde un servidor web; abiertas como " +
  "archivo solo muestran los resultados pre-calculados. En la carpeta del proyecto: " +
  "«python3 build.py serve». O dentro de la carpeta del mazo (la que tiene index.html): " +
  "«python3 -m http.server» y abre http://localhost:8000/.";

export class StatusPanel {
  constructor({ onRetry, onRestart, onRestoreAll }) {
    const panel = document.createElement("div");
    panel.className = "python-status";
    panel.setAttribute("role", "status");
    panel.setAttribute("aria-live", "polite");
    this.text = document.createElement("span");
    this.text.className = "python-status-text";
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
      "Devolver todas las celdas a su código original (cada una se puede deshacer con Ctrl+Z)",
      onRestoreAll,
    );
    panel.append(this.bar, this.text, this.retryButton, this.restartButton, this.restoreButton);
    // Clicks and keys on the panel are not slide navigation.
    panel.addEventListener("keydown", (event) => event.stopPropagation());
    this.panel = panel;
    this.compactTimer = null;
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

  show(state, { progress, failure, message } = {}) {
    const panel = this.panel;
    panel.dataset.state = state;
    // Once Python is ready the panel shrinks to a small label, out of the
    // slides' way; pointing at it or tabbing to it shows its buttons again.
    clearTimeout(this.compactTimer);
    panel.toggleAttribute("data-compact", false);
    if (state === "ready") {
      this.compactTimer = setTimeout(() => panel.toggleAttribute("data-compact", true), COMPACT_AFTER_MS);
    }
    this.retryButton.hidden = state !== "error";
    this.restartButton.hidden = state !== "ready";
    this.bar.hidden = state !== "loading";
    if (state === "loading") {
      const loaded = progress ? progress.loaded : 0;
      const total = progress ? Math.max(progress.total, loaded) : 0;
      this.bar.value = total ? loaded / total : 0;
      this.text.textContent = total
        ? `Cargando Python… ${formatMegabytes(loaded)}/${formatMegabytes(total)} MB`
        : "Cargando Python…";
      if (progress && progress.step === "warmup") this.text.textContent = "Preparando Python…";
    } else if (state === "ready") {
      this.text.textContent = "Python listo";
    } else if (state === "error") {
      const what = failure && STEP_LABELS[failure.step] ? `: falló ${STEP_LABELS[failure.step]}` : "";
      this.text.textContent = `No se pudo cargar Python${what}. ${failure ? failure.message : ""}`;
    } else {
      this.text.textContent = message || "";
    }
    panel.hidden = state === "off" && !message;
  }

  setRestoreEnabled(enabled) {
    this.restoreButton.hidden = !enabled;
  }
}
