// «Zoom this cell»: one cell, code and output, as large as the window allows,
// for the back of the room. A reveal.js plugin: Z (or a cell's four-corner button)
// opens it for the cell on the current slide (the one with focus, else the
// first), Esc or Z closes it.
//
// The cell itself moves into a modal <dialog> inside .reveal (the cell's
// styles apply, its editor and its run keep going) and back to its place on
// close. The dialog sets the code and output size for its own box; keys
// pressed in it never reach reveal's slide navigation.

import { announce } from "./announcer.js";
import { LAYOUT_CHANGED } from "./layout.js";

/** Dispatched by a cell's four-corner button (bubbles from the cell). */
export const ZOOM_REQUEST = "dpdeck:zoom-cell";

const Z_KEY = 90;
// Sizes in window pixels: never smaller than the slide's own, never absurd.
const MIN_FONT_PX = 18;
const MAX_FONT_PX = 44;
// DejaVu Sans Mono's advance width, in em: how wide a line of `n` characters is.
const MONO_ADVANCE_EM = 0.602;
// Line numbers and padding beside the code, in em.
const GUTTER_EM = 3.2;
// Side by side only while the code is at least this large; otherwise stacked.
const LARGE_FONT_PX = 24;

function codeShape(cell) {
  const lines = cell.querySelector(".cm-content")
    ? Array.from(cell.querySelectorAll(".cm-line"), (line) => line.textContent)
    : (cell.querySelector(".cell-source")?.textContent || "").split("\n");
  return { lines: Math.max(1, lines.length), columns: Math.max(20, ...lines.map((line) => line.length)) };
}

/**
 * How to show `cell` in a `width`×`height` box: code and output side by side
 * when the code is still large that way, else one above the other (the view
 * then scrolls down to the output). Returns {arrangement, fontPx}.
 */
function arrange(cell, width, height) {
  const { lines, columns } = codeShape(cell);
  const lineWidthEm = columns * MONO_ADVANCE_EM + GUTTER_EM;
  const hasOutput = Boolean(cell.querySelector(".cell-output > *"));
  // Toolbar and editor padding take about three lines.
  const byHeight = height / ((lines + 3) * 1.3);
  const clamp = (px) => Math.max(MIN_FONT_PX, Math.min(MAX_FONT_PX, px));
  const side = Math.min((width * (hasOutput ? 0.58 : 0.96)) / lineWidthEm, byHeight);
  if (!hasOutput || side >= LARGE_FONT_PX) return { arrangement: "side", fontPx: clamp(side) };
  return { arrangement: "stack", fontPx: clamp((width * 0.96) / lineWidthEm) };
}

export function CellZoom() {
  let reveal = null;
  let dialog = null;
  let body = null;
  let title = null;
  let zoomed = null; // {cell, placeholder, returnFocus}

  const build = () => {
    dialog = document.createElement("dialog");
    dialog.className = "cell-zoom-view";
    dialog.setAttribute("aria-label", "Celda ampliada");
    const header = document.createElement("div");
    header.className = "cell-zoom-header";
    title = document.createElement("span");
    title.className = "cell-zoom-title";
    const close = document.createElement("button");
    close.type = "button";
    close.className = "cell-zoom-close";
    close.dataset.action = "close-zoom";
    close.textContent = "✕ Volver a la diapositiva (Esc)";
    close.addEventListener("click", () => plugin.close());
    header.append(title, close);
    body = document.createElement("div");
    body.className = "cell-zoom-body";
    dialog.append(header, body);
    // Keys typed here (the editor, the buttons) are not slide navigation.
    dialog.addEventListener("keydown", (event) => {
      if (event.keyCode === Z_KEY && !event.target.closest(".cm-content") && !event.ctrlKey && !event.metaKey) {
        event.preventDefault();
        plugin.close();
      }
      event.stopPropagation();
    });
    // Esc: the cell goes back to its slide before the dialog hides, not a task later
    // (the "close" event), so nothing sees the slide without its cell.
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      plugin.close();
    });
    dialog.addEventListener("close", () => plugin.close());
    reveal.getRevealElement().appendChild(dialog);
  };

  const size = () => {
    if (!zoomed) return;
    const box = body.getBoundingClientRect();
    const { arrangement, fontPx } = arrange(zoomed.cell, box.width, box.height);
    dialog.dataset.arrangement = arrangement;
    dialog.style.setProperty("--code-font-size", `${fontPx.toFixed(1)}px`);
    dialog.style.setProperty("--output-font-size", `${(fontPx * 0.92).toFixed(1)}px`);
  };

  const plugin = {
    id: "dpdeck-zoom",
    init(deck) {
      reveal = deck;
      reveal.addKeyBinding({ keyCode: Z_KEY, key: "Z", description: "Ampliar la celda de esta diapositiva (Esc vuelve)" }, () =>
        plugin.open(),
      );
      document.addEventListener(ZOOM_REQUEST, (event) => plugin.open(event.target.closest(".cell")));
      window.addEventListener("resize", size);
    },
    /** Whether a cell is zoomed now. */
    get isOpen() {
      return Boolean(zoomed);
    },
    /** Zooms `cell`, or the cell on the current slide (the focused one, else the first). */
    open(cell = null) {
      if (zoomed) return;
      const slide = reveal.getCurrentSlide();
      const focused = document.activeElement && document.activeElement.closest(".cell");
      const target = cell || (focused && slide.contains(focused) ? focused : slide && slide.querySelector(".cell"));
      if (!target) {
        announce("Esta diapositiva no tiene celdas que ampliar.");
        return;
      }
      if (!dialog) build();
      const placeholder = document.createComment("celda ampliada");
      target.before(placeholder);
      zoomed = { cell: target, placeholder, returnFocus: document.activeElement };
      title.textContent = `Celda ${target.dataset.cellId}`;
      body.appendChild(target);
      document.documentElement.dataset.zoomedCell = target.dataset.cellId;
      dialog.showModal();
      size();
      const run = target.querySelector("[data-action=run]");
      if (run) run.focus();
      document.dispatchEvent(new CustomEvent(LAYOUT_CHANGED));
    },
    close() {
      if (!zoomed) return;
      const { cell, placeholder, returnFocus } = zoomed;
      zoomed = null;
      placeholder.replaceWith(cell);
      delete document.documentElement.dataset.zoomedCell;
      if (dialog.open) dialog.close();
      if (returnFocus && returnFocus.isConnected && returnFocus !== document.body) returnFocus.focus();
      else if (document.activeElement) document.activeElement.blur();
      document.dispatchEvent(new CustomEvent(LAYOUT_CHANGED));
    },
  };
  return plugin;
}
