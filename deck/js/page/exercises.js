// The exercises, as a reveal.js plugin: each `.ejercicio` the build wrote
// (deck/README.md, «Exercises») gets its buttons: «Comprobar» runs the cell
// and its check in Python and shows the verdict in Spanish; «Pista» shows the
// next hint; «Solución» shows the solution, and «Usar esta solución» puts it
// in the editor (one undoable edit). The challenge (`.ejercicio.reto`) keeps
// its four fields and the seed in this browser, like a cell's edit, and
// «Exportar laboratorio (JSON)» downloads the lab with them as
// `student_extension`.
//
// It works through the `dpdeck` plugin's script surface only (deck.js):
// cell(id).check(), cell(id).setSource(), lab(), store.

import { downloadText } from "./downloads.js";
import { deckPath, isPrintPdf, isReceiver } from "./page.js";
import { JsonEntries } from "./storage.js";

const TEXT = {
  check: "Comprobar",
  checking: "Comprobando…",
  hint: (next, count) => `Pista ${next} de ${count}`,
  noMoreHints: "No hay más pistas",
  showSolution: "Ver la solución",
  hideSolution: "Ocultar la solución",
  showExample: "Ver un ejemplo",
  hideExample: "Ocultar el ejemplo",
  useSolution: "Usar esta solución",
  useSolutionTitle: "Poner la solución en el editor (Ctrl+Z la deshace)",
  export: "Exportar laboratorio (JSON)",
  notebook: "Cuaderno (.ipynb)",
  notebookTitle: "Descargar el cuaderno Jupyter de este capítulo, con tus cambios",
  exporting: "Corriendo el laboratorio…",
  cellError: "La celda terminó con un error (está en su salida): corrígelo y vuelve a comprobar.",
  stopped: "La comprobación se detuvo antes de terminar.",
  noPython: "Python no está disponible en esta vista: ábrela desde un servidor para comprobar.",
  exported: (name) => `Descargado ${name}: el laboratorio con tu extensión.`,
  notExported: "Para exportar, completa las cuatro partes (ninguna vacía).",
};

/** A verdict's sentence, with its `code` spans as <code> (built as nodes: never parsed as HTML). */
function sentence(element, text) {
  String(text).split("`").forEach((piece, index) => {
    if (!piece) return;
    if (index % 2) {
      const code = document.createElement("code");
      code.textContent = piece;
      element.appendChild(code);
    } else {
      element.appendChild(document.createTextNode(piece));
    }
  });
  return element;
}

/** The verdict as the page shows it: a summary line and one line per finding, ✓ or ✗. */
function renderVerdict(element, verdict) {
  element.replaceChildren();
  element.dataset.passed = String(Boolean(verdict.passed));
  const summary = document.createElement("p");
  summary.className = "veredicto-resumen";
  summary.textContent = `${verdict.passed ? "✓" : "✗"} ${verdict.summary}`;
  const list = document.createElement("ul");
  list.className = "veredicto-hallazgos";
  for (const finding of verdict.findings) {
    const item = document.createElement("li");
    item.dataset.ok = String(Boolean(finding.ok));
    sentence(item, finding.text);
    list.appendChild(item);
  }
  element.append(summary, list);
  element.hidden = false;
}

function renderNotice(element, text) {
  element.replaceChildren();
  element.dataset.passed = "false";
  const line = document.createElement("p");
  line.className = "veredicto-resumen";
  sentence(line, text);
  element.appendChild(line);
  element.hidden = false;
}

function makeButton(action, text, title = "") {
  const element = document.createElement("button");
  element.type = "button";
  element.className = `ejercicio-boton ejercicio-${action}`;
  element.dataset.action = action;
  element.textContent = text;
  if (title) element.title = title;
  return element;
}

class Exercise {
  /**
   * deck: the dpdeck plugin; tools: the dpdeck-tools plugin (its notebook), if there is one;
   * verdicts: where the last «Comprobar» of each exercise is noted (for «Exportar mi trabajo»).
   */
  constructor(element, deck, tools, verdicts) {
    this.element = element;
    this.deck = deck;
    this.tools = tools;
    this.verdicts = verdicts;
    this.id = element.dataset.exercise;
    this.challenge = element.classList.contains("reto");
    this.panel = element.querySelector(".ejercicio-panel");
    this.answer = element.querySelector(".ejercicio-respuesta");
    this.help = element.querySelector(".ejercicio-ayuda");
    this.verdict = element.querySelector(".ejercicio-veredicto");
    this.verdict.setAttribute("role", "status");
    this.verdict.setAttribute("aria-live", "polite");
    this.hints = Array.from(element.querySelectorAll(".ejercicio-pista"));
    this.solution = element.querySelector(".ejercicio-solucion");
    this.buildActions();
    if (this.challenge) this.watchFields();
    element.dataset.ready = "true";
  }

  buildActions() {
    const actions = document.createElement("div");
    actions.className = "ejercicio-acciones";
    this.checkButton = makeButton("check", TEXT.check, "Ejecutar y comprobar tu respuesta");
    this.hintButton = makeButton("hint", TEXT.hint(1, this.hints.length));
    this.solutionButton = makeButton("solution", this.challenge ? TEXT.showExample : TEXT.showSolution);
    this.checkButton.addEventListener("click", () => this.check());
    this.hintButton.addEventListener("click", () => this.showNextHint());
    this.solutionButton.addEventListener("click", () => this.toggleSolution());
    actions.append(this.checkButton, this.hintButton, this.solutionButton);
    if (this.challenge) {
      this.exportButton = makeButton("export", TEXT.export, "Descargar el JSON de «python -m dpdeck.lab» con tu extensión");
      this.exportButton.addEventListener("click", () => this.exportLab());
      actions.appendChild(this.exportButton);
    } else {
      if (this.tools) {
        const notebook = makeButton("notebook", TEXT.notebook, TEXT.notebookTitle);
        notebook.addEventListener("click", () => this.tools.downloadNotebook(notebook));
        actions.appendChild(notebook);
      }
      const code = this.solution.querySelector(".ejercicio-codigo code");
      if (code) {
        const use = makeButton("use-solution", TEXT.useSolution, TEXT.useSolutionTitle);
        use.addEventListener("click", () => this.useSolution(code.textContent));
        this.solution.querySelector(".ejercicio-codigo").after(use);
      }
    }
    // The panel's keys (Space, Enter on a focused button) are not slide navigation; after a
    // click with the mouse the button lets go of the focus, so Space and → move the slides again.
    this.panel.addEventListener("keydown", (event) => {
      if (event.target.closest("button, input, textarea")) event.stopPropagation();
    });
    this.panel.addEventListener("click", (event) => {
      const clicked = event.target.closest("button");
      if (clicked && event.detail > 0) clicked.blur();
    });
    this.panel.prepend(actions);
    this.updateHintButton();
  }

  /** Shows `element` in the answer area, hides the help line, and brings it to the area's top. */
  reveal(element) {
    element.hidden = false;
    if (this.help) this.help.hidden = true;
    // Scrolls the panel only (scrollIntoView would also move reveal's slide);
    // rectangles are in window pixels, scrollTop in the slide's (reveal scales slides).
    const area = this.answer.getBoundingClientRect();
    const scale = area.height / (this.answer.offsetHeight || 1) || 1;
    const padding = parseFloat(getComputedStyle(this.answer).paddingTop) || 0;
    this.answer.scrollTop += (element.getBoundingClientRect().top - area.top) / scale - padding;
  }

  showNextHint() {
    const next = this.hints.find((hint) => hint.hidden);
    if (!next) return;
    this.reveal(next);
    this.updateHintButton();
  }

  updateHintButton() {
    const shown = this.hints.filter((hint) => !hint.hidden).length;
    const done = shown >= this.hints.length;
    this.hintButton.disabled = done;
    this.hintButton.textContent = done ? TEXT.noMoreHints : TEXT.hint(shown + 1, this.hints.length);
    this.element.dataset.hintsShown = String(shown);
  }

  toggleSolution() {
    const show = this.solution.hidden;
    if (show) this.reveal(this.solution);
    else this.solution.hidden = true;
    this.element.toggleAttribute("data-solution-shown", show);
    this.solutionButton.textContent = this.challenge
      ? (show ? TEXT.hideExample : TEXT.showExample)
      : (show ? TEXT.hideSolution : TEXT.showSolution);
  }

  useSolution(code) {
    const cell = this.deck.cell(this.id);
    if (cell) cell.setSource(code);
  }

  showVerdict(verdict) {
    // What this browser saw, kept for the exported work; the lecturer's grading checks again.
    this.verdicts.save(this.id, { passed: Boolean(verdict.passed), at: new Date().toISOString() });
    renderVerdict(this.verdict, verdict);
    this.element.dataset.verdict = verdict.passed ? "passed" : "failed";
    this.reveal(this.verdict);
  }

  showNotice(text) {
    renderNotice(this.verdict, text);
    this.element.dataset.verdict = "notice";
    this.reveal(this.verdict);
  }

  busy(button, text) {
    const original = button.textContent;
    button.disabled = true;
    button.textContent = text;
    this.element.setAttribute("aria-busy", "true");
    return () => {
      button.disabled = false;
      button.textContent = original;
      this.element.removeAttribute("aria-busy");
    };
  }

  async check() {
    if (this.challenge) {
      await this.runLab({ download: false });
      return;
    }
    const cell = this.deck.cell(this.id);
    if (!cell) return;
    const done = this.busy(this.checkButton, TEXT.checking);
    try {
      const result = await cell.check();
      if (!result) this.showNotice(TEXT.noPython);
      else if (result.status === "cancelled") return;
      else if (result.verdict) this.showVerdict(result.verdict);
      else if (result.status === "stopped") this.showNotice(result.notice || TEXT.stopped);
      else this.showNotice(result.notice && !(result.outputs || []).length ? result.notice : TEXT.cellError);
    } finally {
      done();
    }
  }

  // ------------------------------------------------------------ the challenge

  get fields() {
    return Array.from(this.element.querySelectorAll(".reto-campos textarea"));
  }

  get seedInput() {
    return this.element.querySelector('.reto-campos input[name="seed"]');
  }

  /** The answer as the lab takes it: {seed, extension: {assumption, measurement, conclusion, limitation}}. */
  readAnswer() {
    const extension = Object.fromEntries(this.fields.map((field) => [field.name, field.value]));
    const seed = Math.max(0, Math.floor(Number(this.seedInput.value) || 0));
    return { seed, extension };
  }

  /** The challenge's answer is kept like a cell's edit: one entry, keyed by its id. */
  watchFields() {
    const store = this.deck.store;
    let saved = null;
    try {
      saved = JSON.parse(store?.load(this.id) || "null");
    } catch {
      saved = null;
    }
    if (saved && saved.extension) {
      for (const field of this.fields) field.value = saved.extension[field.name] ?? "";
      if (Number.isInteger(saved.seed)) this.seedInput.value = String(saved.seed);
    }
    // Saved at every keystroke (a few hundred bytes): the notebook or a reload always finds it.
    const save = () => {
      const answer = this.readAnswer();
      const empty = Object.values(answer.extension).every((value) => !value.trim()) && answer.seed === 0;
      if (empty) store?.forget(this.id);
      else store?.save(this.id, JSON.stringify(answer));
      this.element.toggleAttribute("data-edited", !empty);
    };
    this.element.toggleAttribute("data-edited", Boolean(saved));
    for (const input of [...this.fields, this.seedInput]) {
      input.addEventListener("input", save);
      // Typing in a field is not slide navigation.
      input.addEventListener("keydown", (event) => event.stopPropagation());
    }
  }

  exportLab() {
    return this.runLab({ download: true });
  }

  async runLab({ download }) {
    const button = download ? this.exportButton : this.checkButton;
    const done = this.busy(button, download ? TEXT.exporting : TEXT.checking);
    try {
      const result = await this.deck.lab(this.readAnswer());
      if (!result) {
        this.showNotice(TEXT.noPython);
        return;
      }
      if (!result.verdict) {
        this.showNotice(result.notice);
        return;
      }
      this.showVerdict(result.verdict);
      if (!download) return;
      if (result.json) {
        downloadText(result.filename, result.json, "application/json");
        this.element.dataset.exported = result.filename;
        this.addVerdictLine(TEXT.exported(result.filename));
      } else {
        this.addVerdictLine(TEXT.notExported);
      }
    } finally {
      done();
    }
  }

  addVerdictLine(text) {
    const line = document.createElement("p");
    line.className = "veredicto-nota";
    line.textContent = text;
    this.verdict.appendChild(line);
  }
}

/** The plugin, listed in main.js after `dpdeck`. */
export function Exercises() {
  const exercises = new Map();
  const verdicts = new JsonEntries("verdicts", deckPath);
  return {
    id: "dpdeck-exercises",
    init(reveal) {
      if (isPrintPdf || isReceiver) return;
      const deck = () => reveal.getPlugin("dpdeck");
      const enhance = (element) => {
        if (!element || element.dataset.ready) return;
        try {
          exercises.set(element.dataset.exercise,
            new Exercise(element, deck(), reveal.getPlugin("dpdeck-tools"), verdicts));
        } catch (error) {
          console.error(`ejercicio ${element.dataset.exercise}:`, error);
        }
      };
      // A code exercise gets its buttons once its cell has its editor; the challenge at once.
      document.addEventListener("cell-ready", (event) => enhance(event.target.closest(".ejercicio")));
      reveal.on("ready", () => document.querySelectorAll(".ejercicio.reto").forEach(enhance));
    },
    /** Ids of the exercises that have their buttons. */
    get ids() {
      return Array.from(exercises.keys());
    },
    /** The last «Comprobar» this browser saw of each exercise: {id: {passed, at}}. */
    recordedVerdicts: () => verdicts.entries(),
  };
}
