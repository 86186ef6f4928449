// What a student takes home, as a reveal.js plugin: on every cell, «Copiar»
// (its code), «.py» (its code as a file) and a copy button on its output;
// deck-wide, in the status chip, «Ejecutar la diapositiva», «Ejecutar el
// capítulo…» (which asks first) and «Cuaderno del capítulo (.ipynb)», the
// chapter's notebook with the student's edits and saved outputs in it
// (notebooks.js). A run of many cells never changes the slide on screen.
//
// It works through the `dpdeck` plugin's script surface (deck.js) and the
// markup the build writes (deck/README.md).

import { copyText, downloadPython } from "./downloads.js";
import { chapterOf, downloadChapterNotebook, loadIndex, slideFile } from "./notebooks.js";
import { deckBaseUrl, isPrintPdf, isReceiver } from "./page.js";

const COPIED_MS = 1500;
const TEXT = {
  copy: "Copiar",
  copyCode: "Copiar el código de la celda",
  copyOutput: "Copiar la salida",
  copied: "Copiado ✓",
  notCopied: "No se pudo copiar",
  py: ".py",
  pyTitle: "Descargar el código de la celda como archivo .py",
  runSlide: "Ejecutar la diapositiva",
  runSlideTitle: "Ejecutar, en orden, todas las celdas de esta diapositiva",
  runChapter: "Ejecutar el capítulo…",
  runChapterTitle: "Ejecutar, en orden, todas las celdas del capítulo de esta diapositiva (pregunta antes)",
  runChapterQuestion: (count) =>
    `¿Ejecutar una tras otra las ${count} celdas de este capítulo? La diapositiva en pantalla no cambia.`,
  runChapterYes: (count) => `Ejecutar ${count} celdas`,
  running: (done, total) => `Ejecutando ${done}/${total}…`,
  notebook: "Cuaderno del capítulo (.ipynb)",
  notebookTitle: "Descargar el cuaderno Jupyter de este capítulo, con tus cambios",
  downloaded: "Descargado ✓",
};

function toolButton(action, text, title) {
  const element = document.createElement("button");
  element.type = "button";
  element.className = `cell-button cell-tool cell-${action}`;
  element.dataset.action = action;
  element.textContent = text;
  element.title = title;
  element.setAttribute("aria-label", title);
  return element;
}

/**
 * Says on the button itself what its click did, for a moment: a message
 * elsewhere (a toast) would cover the status chip's other buttons.
 */
export function flashButton(button, text, done) {
  const original = button.dataset.label || button.textContent;
  button.dataset.label = original;
  button.textContent = text;
  button.dataset.done = String(done);
  clearTimeout(button.flashTimer);
  button.flashTimer = setTimeout(() => {
    button.textContent = original;
    delete button.dataset.done;
    delete button.dataset.label;
  }, COPIED_MS);
}

async function copyWithFeedback(button, text) {
  const copied = await copyText(text);
  flashButton(button, copied ? TEXT.copied : TEXT.notCopied, copied);
}

/** The text an output area shows (its label is drawn by CSS and is not part of it). */
function outputText(cellElement) {
  const output = cellElement.querySelector(".cell-output");
  return output ? output.innerText.replace(/\n+$/, "") + "\n" : "";
}

export class CellTools {
  constructor(reveal) {
    this.reveal = reveal;
    this.runningAll = false;
  }

  get deck() {
    return this.reveal.getPlugin("dpdeck");
  }

  /** A cell's own tools: copy and download its code, copy its output. */
  equipCell(element) {
    if (element.dataset.tools) return;
    const id = element.dataset.cellId;
    const toolbar = element.querySelector(".cell-toolbar");
    if (!toolbar) return;
    const copy = toolButton("copy-code", TEXT.copy, TEXT.copyCode);
    const py = toolButton("download-py", TEXT.py, TEXT.pyTitle);
    copy.addEventListener("click", () => copyWithFeedback(copy, this.deck.cell(id)?.source ?? ""));
    py.addEventListener("click", () => downloadPython(id, this.deck.cell(id)?.source ?? ""));
    const group = document.createElement("span");
    group.className = "cell-tools";
    group.append(copy, py);
    const before = toolbar.querySelector(".cell-edited, .cell-status");
    toolbar.insertBefore(group, before);
    // Over the output's top-right corner; a sibling of the output area, which its LiveOutput owns.
    const copyOutput = toolButton("copy-output", TEXT.copy, TEXT.copyOutput);
    copyOutput.classList.add("cell-copy-output");
    copyOutput.addEventListener("click", () => copyWithFeedback(copyOutput, outputText(element)));
    element.appendChild(copyOutput);
    element.dataset.tools = "true";
  }

  // ------------------------------------------------------------ deck-wide

  addDeckActions() {
    const deck = this.deck;
    this.runSlideButton = deck.addAction({
      action: "run-slide", text: TEXT.runSlide, title: TEXT.runSlideTitle, onClick: () => this.runSlide(),
    });
    this.runChapterButton = deck.addAction({
      action: "run-chapter", text: TEXT.runChapter, title: TEXT.runChapterTitle, onClick: () => this.askRunChapter(),
    });
    this.notebookButton = deck.addAction({
      action: "download-notebook", text: TEXT.notebook, title: TEXT.notebookTitle,
      onClick: () => this.downloadNotebook(this.reveal.getCurrentSlide(), this.notebookButton),
    });
    this.reveal.on("slidechanged", () => this.updateButtons());
    this.updateButtons();
  }

  updateButtons() {
    const slide = this.reveal.getCurrentSlide();
    const hasCells = Boolean(slide && slide.querySelector(".cell[data-cell-id]"));
    if (this.runSlideButton) this.runSlideButton.hidden = !hasCells;
  }

  cellIdsIn(sections) {
    return sections.flatMap((section) =>
      Array.from(section.querySelectorAll(".cell[data-cell-id]")).map((element) => element.dataset.cellId));
  }

  /** The sections of the chapter the current slide belongs to (all slides if the index is missing). */
  async chapterSections() {
    const file = slideFile(this.reveal.getCurrentSlide());
    const all = Array.from(document.querySelectorAll(".reveal .slides section[data-source]"));
    try {
      const chapter = chapterOf(await loadIndex(deckBaseUrl), file);
      if (chapter) return all.filter((section) => chapter.files.includes(slideFile(section)));
    } catch {
      /* without the index, a chapter is the slide's file */
    }
    return all.filter((section) => slideFile(section) === file);
  }

  runSlide() {
    return this.runCells(this.cellIdsIn([this.reveal.getCurrentSlide()]), this.runSlideButton);
  }

  async runChapter() {
    return this.runCells(this.cellIdsIn(await this.chapterSections()), this.runChapterButton);
  }

  /**
   * «Ejecutar el capítulo…» runs dozens of cells: it asks first, in the chip,
   * with the focus on «Cancelar» (an Enter by accident runs nothing).
   */
  async askRunChapter() {
    if (this.runningAll) return;
    const ids = this.cellIdsIn(await this.chapterSections());
    if (!ids.length) return;
    this.deck.confirmAction({
      action: "run-chapter",
      question: TEXT.runChapterQuestion(ids.length),
      yes: TEXT.runChapterYes(ids.length),
      onYes: () => this.runCells(ids, this.runChapterButton),
      returnFocus: this.runChapterButton,
    });
  }

  /** Runs cells one after the other, in page order; resolves with their results. */
  async runCells(ids, button) {
    if (this.runningAll || !ids.length) return [];
    this.runningAll = true;
    const original = button ? button.textContent : "";
    const results = [];
    try {
      for (const [index, id] of ids.entries()) {
        if (button) button.textContent = TEXT.running(index + 1, ids.length);
        const cell = this.deck.cell(id);
        const result = cell ? await cell.run() : null;
        results.push({ id, status: result ? result.status : null });
        // Without Python (a file page, the print view) there is nothing more to run.
        if (!result) break;
      }
    } finally {
      if (button) button.textContent = original;
      this.runningAll = false;
    }
    return results;
  }

  /** Downloads the chapter's notebook; `button` (the one clicked) says it was downloaded. */
  async downloadNotebook(section = this.reveal.getCurrentSlide(), button = null) {
    try {
      const name = await downloadChapterNotebook(this.deck, section, deckBaseUrl);
      if (button) flashButton(button, TEXT.downloaded, true);
      return name;
    } catch (error) {
      this.deck.notify(error.message);
      return null;
    }
  }
}

/** The plugin, listed in main.js after `dpdeck`. */
export function CellToolsPlugin() {
  let tools = null;
  return {
    id: "dpdeck-tools",
    init(reveal) {
      if (isPrintPdf || isReceiver) return;
      tools = new CellTools(reveal);
      document.addEventListener("cell-ready", (event) => tools.equipCell(event.target));
      reveal.on("ready", () => tools.addDeckActions());
    },
    /** What «Ejecutar la diapositiva» does; resolves with [{id, status}]. */
    runSlide: () => (tools ? tools.runSlide() : Promise.resolve([])),
    /** What «Ejecutar el capítulo» does; resolves with [{id, status}]. */
    runChapter: () => (tools ? tools.runChapter() : Promise.resolve([])),
    /** What «Cuaderno del capítulo» does (`button`: the one clicked); resolves with the file name, or null. */
    downloadNotebook: (button = null) =>
      (tools ? tools.downloadNotebook(undefined, button) : Promise.resolve(null)),
  };
}
