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

// A run keeps the previous output on screen until it has something to
// replace it with: its final result, or — once it has run this long — the
// text it has printed so far. A quick rerun (the one when Python becomes ready)
// never leaves the cell blank, not even for a figure.
export const STREAM_AFTER_MS = 1000;
// Until then the previous output is marked as being recomputed (dimmed, with
// its label saying so) only after this long: quick runs do not blink.
export const RECOMPUTING_MARK_AFTER_MS = 300;

/**
 * A live output area. Attributes on the container (read by cells.css):
 * data-origin (prerendered | live); aria-busy while a run is under way;
 * data-recomputing while the previous output is still shown during a run;
 * data-streaming while the run's own text is shown as it comes; data-previous
 * when a run ended without outputs (Python was restarted) and what is shown
 * is the output of an earlier run; data-elapsed, how long the run shown took.
 */
export class LiveOutput {
  constructor(container, cellId) {
    this.container = container;
    this.cellId = cellId;
    this.objectUrls = [];
    this.running = false;
    this.streamed = false;
    this.pending = [];
    this.chars = 0;
    this.capped = false;
    this.timers = [];
  }

  /** A run starts: the shown output stays, marked as being recomputed after a moment. */
  begin() {
    this.stopTimers();
    this.running = true;
    this.streamed = false;
    this.pending = [];
    this.chars = 0;
    this.capped = false;
    this.container.setAttribute("aria-busy", "true");
    this.timers.push(
      setTimeout(() => this.container.toggleAttribute("data-recomputing", !this.streamed), RECOMPUTING_MARK_AFTER_MS),
      setTimeout(() => this.startStreaming(), STREAM_AFTER_MS),
    );
  }

  /** Streamed chunks [{name, text}]: held back for the first moments of a run, then shown as they come. */
  appendStreams(chunks) {
    if (this.streamed) {
      this.write(chunks);
      return;
    }
    this.pending.push(...chunks);
    // Nothing on screen to keep: show the text at once.
    if (!this.container.children.length) this.startStreaming();
  }

  /** Replaces the previous output with the text printed so far (if any), and streams from now on. */
  startStreaming() {
    if (this.streamed || !this.running || !this.pending.length) return;
    this.clear();
    this.container.dataset.origin = "live";
    this.container.removeAttribute("data-recomputing");
    this.container.removeAttribute("data-previous");
    delete this.container.dataset.elapsed;
    this.container.setAttribute("data-streaming", "");
    this.streamed = true;
    const pending = this.pending;
    this.pending = [];
    this.write(pending);
  }

  write(chunks) {
    for (const { name, text } of chunks) {
      if (this.capped) break;
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
    this.stopTimers();
    this.running = false;
    this.container.removeAttribute("aria-busy");
    this.container.removeAttribute("data-recomputing");
    this.container.removeAttribute("data-streaming");
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
    if (began && this.pending.length) {
      this.running = true; // startStreaming only shows the text of a run under way
      this.startStreaming();
      this.running = false;
      this.container.removeAttribute("data-streaming");
    }
    if (began && !this.streamed && this.container.querySelector(":scope > :not(.out-notice)")) {
      this.container.setAttribute("data-previous", "");
    }
    if (began) delete this.container.dataset.elapsed;
    this.container.querySelectorAll(".out-notice").forEach((element) => element.remove());
    this.container.appendChild(pre("out-error out-notice", notice));
    this.scrollToEnd();
  }

  stopTimers() {
    this.timers.forEach((timer) => clearTimeout(timer));
    this.timers = [];
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
