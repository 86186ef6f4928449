// The chapter's notebook with the student's own work in it, made in the page
// from the notebook the build ships (notebooks/<capítulo>/notebook.ipynb,
// deck/README.md «Notebooks»): every code cell whose metadata names a deck
// cell gets the code in that cell's editor now, and the output of its last
// run in this browser if it was saved for that code; the challenge's cell
// gets the answer written in its fields. And the chapter's two worksheets as
// the build wrote them (notebook_student.ipynb, notebook_solution.ipynb),
// which the menu links.

import { downloadText } from "./downloads.js";
import { OUTPUT, errorText } from "../shared/protocol.js";

const INDEX_URL = "notebooks/index.json";
const NOTEBOOK_TYPE = "application/x-ipynb+json";

// The worksheets the build writes for each chapter (index.json's `notebooks`), as the page offers them.
export const WORKSHEETS = Object.freeze({
  student: { text: "Ejercicios", suffix: "ejercicios", title: "los ejercicios en blanco, para resolver" },
  solution: { text: "Soluciones", suffix: "soluciones", title: "los ejercicios resueltos y explicados" },
});

let indexPromise = null;

/** notebooks/index.json, fetched once: {chapters: [{name, title, files, notebooks, cells, exercises}]}. */
export function loadIndex(baseUrl) {
  indexPromise ??= fetch(new URL(INDEX_URL, baseUrl)).then((response) => {
    if (!response.ok) throw new Error(`${INDEX_URL}: HTTP ${response.status}`);
    return response.json();
  });
  indexPromise.catch(() => {
    indexPromise = null; // a later click tries again
  });
  return indexPromise;
}

/** The slide file a reveal section comes from (its data-source, "01-privacidad.md:12"). */
export function slideFile(section) {
  const source = section && section.closest("section[data-source]");
  return source ? source.dataset.source.replace(/:\d+$/, "") : null;
}

/** The chapter of the index that covers `file`, or null. */
export function chapterOf(index, file) {
  return (index.chapters || []).find((chapter) => chapter.files.includes(file)) || null;
}

/** Saved outputs (savedoutputs.js) as nbformat outputs. */
export function toNotebookOutputs(outputs) {
  const converted = [];
  for (const output of outputs || []) {
    if (output.type === OUTPUT.STREAM) {
      converted.push({ output_type: "stream", name: output.name === "stderr" ? "stderr" : "stdout", text: output.text });
    } else if (output.type === OUTPUT.VALUE) {
      converted.push({ output_type: "execute_result", execution_count: null, data: { "text/plain": output.text }, metadata: {} });
    } else if (output.type === OUTPUT.FIGURE) {
      converted.push({ output_type: "display_data", data: { "image/png": output.data }, metadata: {} });
    } else if (output.type === OUTPUT.ERROR) {
      converted.push({
        output_type: "error",
        ename: String(output.ename || "Error"),
        evalue: String(output.evalue || ""),
        traceback: errorText(output).split("\n"),
      });
    }
  }
  return converted;
}

/** The challenge's code cell with `semilla` and each field of `student_extension` filled in. */
export function fillChallenge(source, answer) {
  let filled = source.replace(/^semilla = \d+/m, `semilla = ${Number(answer.seed) || 0}`);
  for (const [key, value] of Object.entries(answer.extension || {})) {
    const line = new RegExp(`^(\\s*${JSON.stringify(key)}: ).*,$`, "m");
    // A JSON string is a valid Python string literal.
    filled = filled.replace(line, (_, start) => `${start}${JSON.stringify(String(value))},`);
  }
  return filled;
}

/** A cell's source as one string (nbformat allows a list of lines). */
function sourceText(cell) {
  return Array.isArray(cell.source) ? cell.source.join("") : cell.source;
}

/**
 * A copy of `notebook` with the student's work: sourceOf(cellId) → the code
 * now (or null), savedOf(cellId) → the saved last run (or null),
 * answerOf(challengeId) → the challenge's answer {seed, extension} (or null).
 * With `deckUrl` (the deck's address), the install note names the wheel by
 * its full address, so that `pip install` works wherever the notebook is.
 */
export function notebookWithEdits(notebook, { sourceOf, savedOf, answerOf, deckUrl = null }) {
  const copy = JSON.parse(JSON.stringify(notebook));
  let edited = 0;
  for (const cell of copy.cells) {
    const marks = (cell.metadata && cell.metadata.dpdeck) || {};
    if (marks.install && deckUrl) {
      cell.source = sourceText(cell).replaceAll(`pip install ${marks.install}`,
        `pip install ${new URL(marks.install, deckUrl).href}`);
    }
    if (cell.cell_type !== "code") continue;
    if (marks.cell) {
      const source = sourceOf(marks.cell);
      const original = sourceText(cell);
      if (source !== null && source !== undefined && source !== original) {
        cell.source = source;
        edited += 1;
      }
      const saved = savedOf(marks.cell);
      if (saved && saved.source === cell.source) cell.outputs = toNotebookOutputs(saved.outputs);
    } else if (marks.challenge) {
      const answer = answerOf(marks.challenge);
      if (!answer) continue;
      cell.source = fillChallenge(sourceText(cell), answer);
      edited += 1;
    }
  }
  copy.metadata.dpdeck = { ...(copy.metadata.dpdeck || {}), edited };
  return copy;
}

/** The challenge's answer as exercises.js saves it ({seed, extension} as JSON), or null. */
function savedAnswer(store, id) {
  try {
    const answer = JSON.parse(store?.load(id) || "null");
    return answer && typeof answer.extension === "object" ? answer : null;
  } catch {
    return null;
  }
}

/**
 * Downloads the notebook of the chapter `section` belongs to, with the
 * student's work in it. `deck` is the dpdeck plugin. Resolves with the file
 * name, or throws an Error whose message is Spanish.
 */
export async function downloadChapterNotebook(deck, section, baseUrl) {
  let index;
  try {
    index = await loadIndex(baseUrl);
  } catch (error) {
    throw new Error(`No se pudo leer la lista de cuadernos (${error.message}).`);
  }
  const chapter = chapterOf(index, slideFile(section));
  if (!chapter) throw new Error("Esta diapositiva no pertenece a ningún capítulo con cuaderno.");
  const response = await fetch(new URL(chapter.notebooks.guided, baseUrl));
  if (!response.ok) throw new Error(`No se pudo descargar ${chapter.notebooks.guided}: HTTP ${response.status}.`);
  const notebook = await response.json();
  const withEdits = notebookWithEdits(notebook, {
    sourceOf: (id) => {
      const cell = deck.cell(id);
      return cell ? cell.source : null;
    },
    savedOf: (id) => deck.savedOutputs?.load(id) || null,
    answerOf: (id) => savedAnswer(deck.store, id),
    deckUrl: baseUrl,
  });
  const name = `${chapter.name}.ipynb`;
  downloadText(name, `${JSON.stringify(withEdits, null, 1)}\n`, NOTEBOOK_TYPE);
  return name;
}

/** Where a chapter's worksheet is and the name it is saved under: {url, name}. */
export function worksheetOf(chapter, flavour, baseUrl) {
  return {
    url: new URL(chapter.notebooks[flavour], baseUrl).href,
    name: `${chapter.name}-${WORKSHEETS[flavour].suffix}.ipynb`,
  };
}

/**
 * Saves a worksheet as the build wrote it. Fetched by the page, not followed
 * as a link: the service worker answers the page's requests, so it downloads
 * offline too. Resolves with the file name, or throws an Error whose message
 * is Spanish.
 */
export async function downloadWorksheet({ url, name }) {
  let response;
  try {
    response = await fetch(url);
  } catch {
    throw new Error(`No se pudo descargar ${name}: sin conexión con el servidor del mazo.`);
  }
  if (!response.ok) throw new Error(`No se pudo descargar ${name}: HTTP ${response.status}.`);
  downloadText(name, await response.text(), NOTEBOOK_TYPE);
  return name;
}
