// A cell's «Prueba esto» (deck/README.md, «Try this»), as a reveal.js plugin.
//
// The build writes it inside its cell, after the output, as a folded
// <details class="cell-prueba">: a native disclosure, opened by click, Enter or
// Space and read by screen readers as one. cells.css puts its label in the
// code's top corner and opens its text over the code, so a slide spends no
// room on it until a student asks; on phones it is a line of its own, and in
// ?print-pdf it is printed open under the cell. Here, only what a <details>
// does not do by itself on a slide:
//
// * Space and Enter on its label open it and never also move the slides
//   (reveal.js listens on the document); a click with the pointer gives the
//   keys back to the slides, as the cells' buttons do;
// * Esc closes an open one (and nothing else: not the overview, not a zoomed
//   cell), the focus back on its label;
// * in ?print-pdf every one is open before reveal lays out the pages.

import { isPrintPdf } from "./page.js";

const PROMPTS = ".cell > details.cell-prueba";
const OWN_KEYS = new Set([" ", "Enter", "Spacebar"]);

function equip(prompt) {
  const label = prompt.querySelector(":scope > summary");
  if (!label || prompt.dataset.ready) return;
  label.addEventListener("keydown", (event) => {
    if (OWN_KEYS.has(event.key)) event.stopPropagation();
  });
  label.addEventListener("click", (event) => {
    // Clicked with a pointer (a keyboard press has no click count).
    if (event.detail > 0) label.blur();
  });
  prompt.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !prompt.open) return;
    event.preventDefault();
    event.stopPropagation();
    prompt.open = false;
    label.focus();
  });
  prompt.dataset.ready = "true";
}

export function CellPrompts() {
  return {
    id: "dpdeck-prompts",
    init() {
      const prompts = document.querySelectorAll(PROMPTS);
      if (isPrintPdf) {
        prompts.forEach((prompt) => {
          prompt.open = true;
        });
        return;
      }
      prompts.forEach(equip);
    },
    /** The ids of the cells that have a «Prueba esto», in page order. */
    get ids() {
      return Array.from(document.querySelectorAll(PROMPTS), (prompt) => prompt.closest(".cell").dataset.cellId);
    },
  };
}
