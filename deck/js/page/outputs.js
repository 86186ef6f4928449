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
} from "../shared/protocol.js";
import { RUN_CANCELLED } from "./python.js";
import { base64ToBytes } from "./savedoutputs.js";

// The page never shows more stream text than the contract's limit, whatever arrives.
const PAGE_CAP_NOTICE = "\n[Salida recortada en la página.]\n";
// A saved run whose figures did not fit in this browser's storage (savedoutputs.js).
const FIGURES_NOT_SAVED = "Las figuras de esta ejecución no se guardaron (ocupan demasiado): vuelve a ejecutar la celda para verlas.";
// The live tail shows the end of what a run prints: this many characters at most.
const TAIL_CHARS = 2000;
const TAIL_CLASS = "cell-live";
// A run's result is read out with at most this much of its text.
const ANNOUNCED_CHARS = 240;

/**
 * The pre-computed figures start loading. The page writes them with
 * loading="lazy" (deckbuild.render), so that the browser does not fetch every
 * figure of the deck while it draws the first slide; once reveal.js is ready
 * they all load, as they did before (a slide shows its figure the moment it
 * comes, the speaker view and ?print-pdf have every one).
 */
export function loadPrerenderedFigures(root = document) {
  for (const image of root.querySelectorAll(`${classSelector(OUTPUT_AREA_CLASS)} img[loading="lazy"]`)) {
    image.loading = "eager";
  }
}

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
 * `.cell-output`, made here if the page has none) and the run's live tail
 * beside it. Attributes on the container (read by cells.css): data-origin
 * (prerendered | live); aria-busy while a run is under way; data-recomputing
 * while the previous output is still shown during a run; data-streaming while
 * the run's own text is shown as it comes (only when there was nothing to
 * keep); data-previous when a run ended without outputs (Python was
 * restarted) and what is shown is the output of an earlier run; data-elapsed,
 * how long the run shown took; data-stale when the code has changed since the
 * output shown.
 *
 * A run never moves the slide: the previous output, figures included, stays
 * where it is until the run's final output is complete (its figures decoded),
 * and then the two are swapped in one step. What the run prints meanwhile is
 * shown, once it has run `streamAfterMs`, in a live tail laid over the bottom
 * of the output area (`.cell-live`, absolutely placed in the output's grid
 * area, so it takes no room). The previous output is marked as being
 * recomputed only after `recomputingMarkAfterMs`: quick runs do not blink
 * (config.js). An empty output area has nothing to keep: the run's text goes
 * straight into it.
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
    // Which run the area is showing or waiting for: a finish that was overtaken
    // by a newer run (while its figures decoded) does not swap.
    this.generation = 0;
    this.tail = null;
    this.tailShown = false;
    this.tailText = "";
    // What the area shows when it is not the build's output: {result: {status, outputs, elapsedMs,
    // notice}, origin}, plain data (figures as PNG bytes), which the speaker view is sent (mirror.js).
    this.shown = null;
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
    if (this.container.dataset.origin === ORIGIN.PRERENDERED) return CELL_STATUS.IDLE;
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
    this.generation += 1;
    this.running = true;
    this.streamed = false;
    this.pending = [];
    this.chars = 0;
    this.capped = false;
    this.hideTail();
    this.container.setAttribute("aria-busy", "true");
    this.timers.push(
      setTimeout(() => this.container.toggleAttribute("data-recomputing", !this.streamed), this.recomputingMarkAfterMs),
      setTimeout(() => this.showTail(), this.streamAfterMs),
    );
  }

  /**
   * Streamed chunks [{name, text}]: into the area itself when it had nothing
   * to keep, otherwise into the live tail (shown once the run has lasted a
   * moment).
   */
  appendStreams(chunks) {
    if (!this.running) return;
    const pieces = this.capToPage(chunks);
    if (this.streamed) {
      this.write(pieces);
      return;
    }
    this.pending.push(...pieces);
    if (!this.container.children.length) {
      // Nothing on screen to keep: show the text at once, in the area itself.
      this.startStreaming();
      return;
    }
    this.tailText = (this.tailText + pieces.map((piece) => piece.text).join("")).slice(-TAIL_CHARS);
    if (this.tailShown) this.renderTail();
  }

  /** Chunks cut to what the page may still show (MAX_OUTPUT_CHARS), with a notice where it ends. */
  capToPage(chunks) {
    const kept = [];
    for (const { name, text } of chunks) {
      if (this.capped) break;
      let piece = text;
      if (this.chars + piece.length > MAX_OUTPUT_CHARS) {
        piece = piece.slice(0, MAX_OUTPUT_CHARS - this.chars) + PAGE_CAP_NOTICE;
        this.capped = true;
      }
      this.chars += piece.length;
      kept.push({ name, text: piece });
    }
    return kept;
  }

  // ------------------------------------------------------------ the live tail

  /** Once the run has lasted `streamAfterMs`: the end of what it printed, over the bottom of the area. */
  showTail() {
    if (!this.running || this.streamed) return;
    this.tailShown = true;
    if (this.tailText) this.renderTail();
  }

  renderTail() {
    if (!this.tail) {
      this.tail = document.createElement("pre");
      this.tail.className = TAIL_CLASS;
      // The final output is announced when the run ends; this is only a glimpse.
      this.tail.setAttribute("aria-hidden", "true");
      this.container.after(this.tail);
    }
    this.tail.textContent = this.tailText;
    this.tail.hidden = false;
    this.tail.scrollTop = this.tail.scrollHeight;
  }

  hideTail() {
    this.tailShown = false;
    this.tailText = "";
    if (this.tail) {
      this.tail.hidden = true;
      this.tail.textContent = "";
    }
  }

  /** Shows the text printed so far in the area itself (which had nothing to keep), and streams from now on. */
  startStreaming() {
    if (this.streamed || !this.running || !this.pending.length) return;
    this.hideTail();
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

  /** Appends chunks already capped to the page's limit. */
  write(chunks) {
    for (const { name, text: piece } of chunks) {
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

  /**
   * Shows a run saved in this browser by an earlier visit (savedoutputs.js):
   * the student's last run of their own code, labelled as such (data-origin="saved").
   */
  showSaved(entry) {
    const outputs = entry.outputs.map((output) =>
      output.type === OUTPUT.FIGURE ? { ...output, data: base64ToBytes(output.data) } : output,
    );
    const notice = entry.figuresDropped ? FIGURES_NOT_SAVED : entry.notice || undefined;
    return this.finish({ status: entry.status, outputs, elapsedMs: entry.elapsedMs ?? undefined, notice },
      { origin: ORIGIN.SAVED });
  }

  /**
   * Replaces everything with the run's final outputs (plus an optional
   * notice), in one step once its figures are decoded: until then the
   * previous output stays. Resolves when the new output is on screen.
   * `origin`: where the output comes from (a live run, or a saved one).
   */
  async finish(result, { origin = ORIGIN.LIVE } = {}) {
    const began = this.running;
    const generation = this.generation;
    this.stopTimers();
    this.running = false;
    if (result.status === RUN_CANCELLED) {
      this.endRun();
      return;
    }
    const outputs = result.outputs || [];
    const shown = { result: { status: result.status, outputs, elapsedMs: result.elapsedMs ?? null,
      notice: result.notice || null }, origin };
    if (!outputs.length && result.notice) {
      this.endRun();
      this.finishWithNotice(result.notice, began);
      this.shown = shown;
      return;
    }
    const fragment = document.createDocumentFragment();
    const urls = [];
    let figureNumber = 0;
    for (const output of outputs) {
      const element = this.render(output, figureNumber, urls);
      if (output.type === OUTPUT.FIGURE) figureNumber += 1;
      if (element) fragment.appendChild(element);
    }
    if (result.notice) fragment.appendChild(notice(result.notice));
    // A figure not yet decoded has no size: swapped in now, it would collapse
    // the area for a frame and move the slide's text.
    const images = Array.from(fragment.querySelectorAll("img"));
    await Promise.all(images.map((image) => image.decode().catch(() => {})));
    if (generation !== this.generation) {
      // A newer run began meanwhile: it owns the area now.
      urls.forEach((url) => URL.revokeObjectURL(url));
      return;
    }
    this.endRun();
    this.clear();
    this.objectUrls = urls;
    this.shown = shown;
    this.container.dataset.origin = origin;
    this.container.removeAttribute("data-previous");
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

  /** The run's marks come off the area, and its tail goes. */
  endRun() {
    this.hideTail();
    this.container.removeAttribute("aria-busy");
    this.container.removeAttribute("data-recomputing");
    this.container.removeAttribute("data-streaming");
  }

  stopTimers() {
    this.timers.forEach((timer) => clearTimeout(timer));
    this.timers = [];
  }

  /** One output's element; a figure's blob URL goes into `urls`, to be revoked with the output. */
  render(output, figureNumber, urls) {
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
        urls.push(url);
        image.src = url;
        image.alt = figureAlt(figureNumber + 1, output.description || "");
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

  /** What the area shows, in a sentence or two for a screen reader: its first text and its figures. */
  describe() {
    const texts = [];
    const figures = [];
    for (const element of this.container.children) {
      if (element.localName === OUTPUT_TAG[OUTPUT.FIGURE]) figures.push(element.alt);
      else if (element.textContent.trim()) texts.push(element.textContent.trim());
    }
    const text = texts.join(" ").replace(/\s+/g, " ");
    const shown = text.length > ANNOUNCED_CHARS ? `${text.slice(0, ANNOUNCED_CHARS)}…` : text;
    return [shown, ...figures].filter(Boolean).join(" ");
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
