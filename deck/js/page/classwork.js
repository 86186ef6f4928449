// «Exportar mi trabajo», as a reveal.js plugin: one JSON file with what a
// student did in this browser, for the lecturer's `python -m dpdeck.grade`
// (dpdeck.classroom.work describes the format): the cells they edited, each
// exercise's code with the check it goes with and what «Comprobar» last said
// here, the lab challenge's answer and the predictions they made. The menu
// (M) has the button and a field for the student's name.
//
// It reads through the other plugins' surfaces: the `dpdeck` plugin (its
// store and cells), `dpdeck-exercises` (the verdicts it noted) and
// `dpdeck-predictions` (the choices); the page's <html> carries the deck's id
// and the version of its checks (deckbuild.render).

import { announce } from "./announcer.js";
import { downloadText } from "./downloads.js";
import { deckPath, isPrintPdf, isReceiver } from "./page.js";
import { JsonEntries } from "./storage.js";
import { makeWork, slug } from "./workfile.js";

// The challenge's answer lives with the edits (exercises.js) under this id.
const CHALLENGE_ID = "reto-laboratorio";
const NAME_ID = "nombre";

export function ClassWork() {
  let reveal = null;
  const student = new JsonEntries("student", deckPath);

  const readChallenge = (store) => {
    try {
      const answer = JSON.parse(store.load(CHALLENGE_ID) || "null");
      return answer && typeof answer === "object" && answer.extension ? answer : null;
    } catch {
      return null;
    }
  };

  const collect = () => {
    const deck = reveal.getPlugin("dpdeck");
    const store = deck.store;
    const exerciseElements = Array.from(document.querySelectorAll(".ejercicio[data-exercise][data-check]:not(.reto)"));
    const exerciseIds = new Set(exerciseElements.map((element) => element.dataset.exercise));
    const edits = {};
    for (const [id, source] of Object.entries(store.entries())) {
      if (id !== CHALLENGE_ID && !exerciseIds.has(id)) edits[id] = source;
    }
    const recorded = reveal.getPlugin("dpdeck-exercises")?.recordedVerdicts() || {};
    const exercises = {};
    for (const element of exerciseElements) {
      const id = element.dataset.exercise;
      const cell = deck.cell(id);
      if (!cell) continue;
      const verdict = recorded[id];
      exercises[id] = {
        check: element.dataset.check,
        source: cell.source,
        edited: cell.edited,
        browserVerdict: verdict && typeof verdict.passed === "boolean" ? { passed: verdict.passed, at: String(verdict.at || "") } : null,
      };
    }
    const root = document.documentElement;
    return makeWork({
      deck: { id: root.dataset.deck || "", title: document.title },
      checkers: root.dataset.checkers || "",
      student: plugin.studentName,
      exportedAt: new Date().toISOString(),
      edits,
      exercises,
      challenge: readChallenge(store),
      predictions: reveal.getPlugin("dpdeck-predictions")?.choices() || {},
    });
  };

  const plugin = {
    id: "dpdeck-work",
    init(deck) {
      reveal = deck;
    },
    /** Whether this page can export (not the print view nor a speaker view's preview). */
    get available() {
      return !isPrintPdf && !isReceiver;
    },
    get studentName() {
      const saved = student.load(NAME_ID);
      return typeof saved === "string" ? saved : "";
    },
    set studentName(name) {
      student.save(NAME_ID, String(name).slice(0, 120));
    },
    /** The work as a plain object, with its sha256 (what «Exportar mi trabajo» saves). */
    collect,
    /** «Exportar mi trabajo»: downloads the JSON; resolves with its file name. */
    exportWork() {
      const work = collect();
      const date = work.exportedAt.slice(0, 10);
      const who = slug(work.student) || "estudiante";
      const name = `trabajo-${who}-${work.deck.id || "mazo"}-${date}.json`;
      downloadText(name, `${JSON.stringify(work, null, 1)}\n`, "application/json");
      announce(`Descargado ${name}: dáselo a tu profesor.`);
      return name;
    },
  };
  return plugin;
}
