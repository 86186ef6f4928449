// «Predice antes de ejecutar», as a reveal.js plugin: a cell with a
// `::: prediccion` (deck/README.md, «Predict, then run») hides its output
// behind a question and its choices until it runs. The student picks what
// they expect it to print, runs the cell, and sees the output with a line that
// says whether they were right. The choice is kept in this browser like an edit
// (`dpdeck:predictions:<deck path>:<cell id>`: {choice, revealed}) and goes
// into «Exportar mi trabajo» (classwork.js).
//
// Which choice is right is written by the build (`data-correct`), which
// checked it against what the cell prints (deckbuild.predictions). The
// speaker view's previews show every answer (the lecturer's view); ?print-pdf
// prints the question under the output, its choices as text with the right one
// marked (classroom.css).

import { announce } from "./announcer.js";
import { deckPath, isPrintPdf, isReceiver, pythonAllowed } from "./page.js";
import { JsonEntries } from "./storage.js";
import { RUN_STATUS } from "../shared/protocol.js";

const TEXT = {
  chosen: (choice) => `Tu predicción: ${choice}. Ahora ejecuta la celda (▶).`,
  right: (answer) => `✓ Acertaste: imprime ${answer}`,
  wrong: (answer, choice) => `✗ Imprime ${answer}; elegiste ${choice}`,
  none: (answer) => `Imprime ${answer}`,
};

class Prediction {
  constructor(element, store) {
    this.element = element;
    this.cell = element.closest(".cell");
    this.id = this.cell.dataset.cellId;
    this.store = store;
    this.buttons = Array.from(element.querySelectorAll("button[data-choice]"));
    this.answer = element.querySelector("li[data-correct] [data-choice]")?.dataset.choice ?? "";
    this.verdict = element.querySelector(".cell-prediccion-veredicto");
    this.verdict.setAttribute("role", "status");
    this.verdict.setAttribute("aria-live", "polite");
    const saved = store.load(this.id) || {};
    this.choice = typeof saved.choice === "string" ? saved.choice : null;
    for (const button of this.buttons) {
      button.addEventListener("click", (event) => {
        if (event.detail > 0) button.blur();
        this.choose(button.dataset.choice);
      });
      // A choice's keys are not slide navigation.
      button.addEventListener("keydown", (event) => event.stopPropagation());
    }
    this.showChoice();
    if (saved.revealed) this.reveal({ quiet: true });
  }

  choose(choice) {
    if (this.cell.hasAttribute("data-revealed")) return;
    this.choice = choice;
    this.save(false);
    this.showChoice();
    this.verdict.textContent = TEXT.chosen(choice);
    // Without Python here (a file page), the build's output is the answer: shown at once.
    if (!pythonAllowed) this.reveal();
  }

  showChoice() {
    for (const button of this.buttons) button.setAttribute("aria-pressed", String(button.dataset.choice === this.choice));
    this.cell.toggleAttribute("data-predicted", this.choice !== null);
  }

  save(revealed) {
    if (this.choice === null && !revealed) return;
    this.store.save(this.id, { choice: this.choice, revealed });
  }

  /** The output comes out from behind the question, with whether the choice was right. */
  reveal({ quiet = false } = {}) {
    const first = !this.cell.hasAttribute("data-revealed");
    this.cell.setAttribute("data-revealed", "");
    const outcome = this.choice === null ? "none" : this.choice === this.answer ? "right" : "wrong";
    this.element.dataset.outcome = outcome;
    this.verdict.textContent = TEXT[outcome](this.answer, this.choice);
    if (first) this.save(true);
    if (first && !quiet) announce(this.verdict.textContent);
  }

  /** For the exported work: {choice, answer}, or null before any choice. */
  describe() {
    return this.choice === null ? null : { choice: this.choice, answer: this.answer };
  }
}

/** On paper a choice is text, not a button: each becomes a <span> with its class and content. */
function printChoicesAsText() {
  for (const button of document.querySelectorAll(".cell-prediccion button.cell-prediccion-opcion")) {
    const text = document.createElement("span");
    text.className = button.className;
    text.append(...button.childNodes);
    button.replaceWith(text);
  }
}

/** The plugin, listed in main.js after `dpdeck`. */
export function Predictions() {
  const predictions = new Map();
  const store = new JsonEntries("predictions", deckPath);
  return {
    id: "dpdeck-predictions",
    init() {
      if (isPrintPdf) {
        printChoicesAsText();
        return;
      }
      const elements = document.querySelectorAll(".cell[data-predict] > .cell-prediccion");
      if (isReceiver) {
        // The lecturer's view: every answer in sight.
        elements.forEach((element) => element.closest(".cell").setAttribute("data-revealed", ""));
        return;
      }
      for (const element of elements) {
        try {
          const prediction = new Prediction(element, store);
          predictions.set(prediction.id, prediction);
        } catch (error) {
          console.error("predicción:", error);
        }
      }
      // A run that ended (not one stopped or cut short) shows the answer.
      document.addEventListener("cell-ran", (event) => {
        const prediction = predictions.get(event.detail.id);
        if (prediction && event.detail.status === RUN_STATUS.DONE) prediction.reveal();
      });
    },
    /** The choices made so far: {cell id: {choice, answer}}. */
    choices() {
      const found = {};
      for (const [id, prediction] of predictions) {
        const described = prediction.describe();
        if (described) found[id] = described;
      }
      return found;
    },
    /** Ids of the cells with a prediction, in page order. */
    get ids() {
      return Array.from(predictions.keys());
    },
  };
}
