// Renders a cell's outputs with the same markup the build writes for the
// pre-computed ones (deck/README.md), so both look and test the same.

// The page never shows more stream text than this, whatever arrives.
export const MAX_OUTPUT_CHARS = 20000;
export const MAX_FIGURES = 20;
const PAGE_CAP_NOTICE = "\n[Salida recortada en la página.]\n";

function pre(className, text) {
  const element = document.createElement("pre");
  element.className = className;
  element.textContent = text;
  return element;
}

function streamClass(name) {
  return `out-stream out-${name === "stderr" ? "stderr" : "stdout"}`;
}

/** A live output area: clears the old output and appends streamed text as it comes. */
export class LiveOutput {
  constructor(container, cellId) {
    this.container = container;
    this.cellId = cellId;
    this.objectUrls = [];
    this.running = false;
    this.streamed = false;
    this.chars = 0;
    this.capped = false;
  }

  /** Marks the current output as stale while a run is under way. */
  begin() {
    this.running = true;
    this.streamed = false;
    this.chars = 0;
    this.capped = false;
    this.container.setAttribute("aria-busy", "true");
  }

  /** Appends streamed chunks [{name, text}], replacing the old output on the first one. */
  appendStreams(chunks) {
    if (!this.streamed) {
      this.clear();
      this.container.dataset.origin = "live";
      this.container.removeAttribute("data-previous");
      delete this.container.dataset.elapsed;
      this.streamed = true;
    }
    for (const { name, text } of chunks) {
      if (this.capped) return;
      let piece = text;
      if (this.chars + piece.length > MAX_OUTPUT_CHARS) {
        piece = piece.slice(0, MAX_OUTPUT_CHARS - this.chars) + PAGE_CAP_NOTICE;
        this.capped = true;
      }
      this.chars += piece.length;
      const last = this.container.lastElementChild;
      if (last && last.tagName === "PRE" && last.className === streamClass(name)) {
        last.appendChild(document.createTextNode(piece));
      } else {
        this.container.appendChild(pre(streamClass(name), piece));
      }
    }
    this.scrollToEnd();
  }

  /** Replaces everything with the run's final outputs (plus an optional notice). */
  finish(result) {
    const began = this.running;
    this.running = false;
    this.container.removeAttribute("aria-busy");
    if (result.status === "cancelled") return;
    const outputs = result.outputs || [];
    if (!outputs.length && result.notice) {
      this.finishWithNotice(result.notice, began);
      return;
    }
    this.clear();
    this.container.dataset.origin = "live";
    this.container.removeAttribute("data-previous");
    const fragment = document.createDocumentFragment();
    let figureNumber = 0;
    for (const output of outputs) {
      const element = this.render(output, figureNumber);
      if (output.type === "figure") figureNumber += 1;
      if (element) fragment.appendChild(element);
    }
    if (result.notice) fragment.appendChild(pre("out-error out-notice", result.notice));
    this.container.appendChild(fragment);
    if (typeof result.elapsedMs === "number") {
      this.container.dataset.elapsed = formatSeconds(result.elapsedMs);
    } else {
      delete this.container.dataset.elapsed;
    }
    this.scrollToEnd();
  }

  /**
   * Python gave no outputs (it was restarted during the run, or is not
   * available) and says why. A run that printed something shows that text;
   * otherwise the output on screen belongs to an earlier run, and once a run
   * had begun it is marked so (data-previous: dimmed, «resultado anterior»).
   */
  finishWithNotice(notice, began) {
    if (began && !this.streamed && this.container.querySelector(":scope > :not(.out-notice)")) {
      this.container.setAttribute("data-previous", "");
    }
    if (began) delete this.container.dataset.elapsed;
    this.container.querySelectorAll(".out-notice").forEach((element) => element.remove());
    this.container.appendChild(pre("out-error out-notice", notice));
    this.scrollToEnd();
  }

  render(output, figureNumber) {
    switch (output.type) {
      case "stream":
        return pre(streamClass(output.name), output.text);
      case "value":
        return pre("out-value", output.text);
      case "error":
        return pre("out-error", output.traceback || `${output.ename}: ${output.evalue}`);
      case "figure": {
        const image = document.createElement("img");
        image.className = "out-figure";
        const url = URL.createObjectURL(new Blob([output.data], { type: "image/png" }));
        this.objectUrls.push(url);
        image.src = url;
        image.alt = `Figura ${figureNumber + 1} de la celda ${this.cellId}`;
        if (output.width && output.height) {
          image.width = output.width;
          image.height = output.height;
        }
        return image;
      }
      default:
        return null;
    }
  }

  clear() {
    for (const url of this.objectUrls) URL.revokeObjectURL(url);
    this.objectUrls = [];
    this.container.replaceChildren();
  }

  scrollToEnd() {
    this.container.scrollTop = this.container.scrollHeight;
  }
}

function formatSeconds(ms) {
  if (ms < 100) return "< 0,1 s";
  const seconds = ms / 1000;
  const digits = seconds < 10 ? 1 : 0;
  return `${seconds.toLocaleString("es-ES", { maximumFractionDigits: digits, minimumFractionDigits: digits })} s`;
}
