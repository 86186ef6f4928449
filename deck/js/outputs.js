// A cell's output area: renders its outputs with the same markup the build
// writes for the pre-computed ones (the live cells' contract, protocol.js and
// deck/README.md), so both look and test the same.

import {
  CELL_STATUS,
  MAX_OUTPUT_CHARS,
  NOTICE_CLASS,
  NOTICE_TAG,
  ORIGIN,
  OUTPUT,
  OUTPUT_AREA_CLASS,
  OUTPUT_AREA_TAG,
  OUTPUT_TAG,
  errorText,
  figureAlt,
  outputClass,
} from "./protocol.js";
import { RUN_CANCELLED } from "./python.js";

// The page never shows more stream text than the contract's limit, whatever arrives.
const PAGE_CAP_NOTICE = "\n[Salida recortada en la página.]\n";

function textBlock(tag, className, text) {
  const element = document.createElement(tag);
  element.className = className;
  element.textContent = text;
  return element;
}

function notice(text) {
  return textBlock(NOTICE_TAG, NOTICE_CLASS, text);
}

/** "out-error out-notice" → ".out-error.out-notice" */
function classSelector(className) {
  return `.${className.split(" ").join(".")}`;
}

/**
 * A live output area, the only code that changes its container (the cell's
 * `.cell-output`, made here if the page has none). Attributes on the container
 * (read by cells.css): data-origin (prerendered | live); aria-busy while a run
 * is under way; data-recomputing while the previous output is still shown
 * during a run; data-streaming while the run's own text is shown as it comes;
 * data-previous when a run ended without outputs (Python was restarted) and
 * what is shown is the output of an earlier run; data-elapsed, how long the
 * run shown took; data-stale when the code has changed since the output shown.
 *
 * A run keeps the previous output on screen until it has something to
 * replace it with: its final result, or — once it has run `streamAfterMs` —
 * the text it has printed so far. A quick rerun (the one when Python becomes
 * ready) never leaves the cell blank, not even for a figure. Until then the
 * previous output is marked as being recomputed only after
 * `recomputingMarkAfterMs`: quick runs do not blink (config.js).
 */
export class LiveOutput {
  constructor(cellElement, cellId, { streamAfterMs, recomputingMarkAfterMs }) {
    this.container = cellElement.querySelector(classSelector(OUTPUT_AREA_CLASS)) || this.makeContainer(cellElement);
    this.cellId = cellId;
    this.streamAfterMs = streamAfterMs;
    this.recomputingMarkAfterMs = recomputingMarkAfterMs;
    this.objectUrls = [];
    this.running = false;
    this.streamed = false;
    this.pending = [];
    this.chars = 0;
    this.capped = false;
    this.timers = [];
  }

  makeContainer(cellElement) {
    const container = document.createElement(OUTPUT_AREA_TAG);
    container.className = OUTPUT_AREA_CLASS;
    container.dataset.origin = ORIGIN.PRERENDERED;
    cellElement.appendChild(container);
    return container;
  }

  /** Marks the output shown as belonging to other code than the editor's (or not). */
  setStale(stale) {
    this.container.toggleAttribute("data-stale", stale);
  }

  /** The cell status the output shown stands for: idle (pre-computed), done or error. */
  shownStatus() {
    if (this.container.dataset.origin !== ORIGIN.LIVE) return CELL_STATUS.IDLE;
    const error = this.container.querySelector(`:scope > ${classSelector(outputClass(OUTPUT.ERROR))}`);
    return error ? CELL_STATUS.ERROR : CELL_STATUS.DONE;
  }

  /** True when every figure shown has loaded; otherwise calls `onLoad` once each loads and returns false. */
  figuresLoaded(onLoad) {
    const loading = Array.from(this.container.querySelectorAll("img")).filter((image) => !image.complete);
    loading.forEach((image) => image.addEventListener("load", onLoad, { once: true }));
    return loading.length === 0;
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
      setTimeout(() => this.container.toggleAttribute("data-recomputing", !this.streamed), this.recomputingMarkAfterMs),
      setTimeout(() => this.startStreaming(), this.streamAfterMs),
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
    this.container.dataset.origin = ORIGIN.LIVE;
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
      const className = outputClass(OUTPUT.STREAM, name);
      if (last && last.localName === OUTPUT_TAG[OUTPUT.STREAM] && last.className === className) {
        last.appendChild(document.createTextNode(piece));
      } else {
        this.container.appendChild(textBlock(OUTPUT_TAG[OUTPUT.STREAM], className, piece));
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
    if (result.status === RUN_CANCELLED) return;
    const outputs = result.outputs || [];
    if (!outputs.length && result.notice) {
      this.finishWithNotice(result.notice, began);
      return;
    }
    this.clear();
    this.container.dataset.origin = ORIGIN.LIVE;
    this.container.removeAttribute("data-previous");
    const fragment = document.createDocumentFragment();
    let figureNumber = 0;
    for (const output of outputs) {
      const element = this.render(output, figureNumber);
      if (output.type === OUTPUT.FIGURE) figureNumber += 1;
      if (element) fragment.appendChild(element);
    }
    if (result.notice) fragment.appendChild(notice(result.notice));
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
  finishWithNotice(text, began) {
    if (began && this.pending.length) {
      this.running = true; // startStreaming only shows the text of a run under way
      this.startStreaming();
      this.running = false;
      this.container.removeAttribute("data-streaming");
    }
    const notices = classSelector(NOTICE_CLASS);
    if (began && !this.streamed && this.container.querySelector(`:scope > :not(${notices})`)) {
      this.container.setAttribute("data-previous", "");
    }
    if (began) delete this.container.dataset.elapsed;
    this.container.querySelectorAll(notices).forEach((element) => element.remove());
    this.container.appendChild(notice(text));
    this.scrollToEnd();
  }

  stopTimers() {
    this.timers.forEach((timer) => clearTimeout(timer));
    this.timers = [];
  }

  render(output, figureNumber) {
    const tag = OUTPUT_TAG[output.type];
    switch (output.type) {
      case OUTPUT.STREAM:
        return textBlock(tag, outputClass(OUTPUT.STREAM, output.name), output.text);
      case OUTPUT.VALUE:
        return textBlock(tag, outputClass(OUTPUT.VALUE), output.text);
      case OUTPUT.ERROR:
        return textBlock(tag, outputClass(OUTPUT.ERROR), errorText(output));
      case OUTPUT.FIGURE: {
        const image = document.createElement(tag);
        image.className = outputClass(OUTPUT.FIGURE);
        const url = URL.createObjectURL(new Blob([output.data], { type: "image/png" }));
        this.objectUrls.push(url);
        image.src = url;
        image.alt = figureAlt(figureNumber + 1, this.cellId);
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
