// reveal.js's own screens in Spanish: the keyboard help (?), the pause screen
// (B), the jump-to-slide box (G), the arrows' names for screen readers, and the
// speaker notes pages of a printed handout (?print-pdf&showNotes=separate-page).
// A reveal.js plugin.
//
// reveal builds its help overlay from English descriptions each time it opens
// (and resets them whenever its configuration changes), so the overlay is
// translated after reveal has drawn it ("showhelp" event), from a table of
// reveal 5's texts. The deck's plugins register their slide keys with
// reveal.addKeyBinding (code size, zoom, menu, stop…), so reveal lists them
// itself, in Spanish; the keys that work inside a cell are added at the end.
// Help opens with ?, H or F1 (config.js): ? is Shift+' on a Spanish keyboard.
// Its look comes from main.css.

// reveal 5's help texts (js/controllers/keyboard.js, plugin/notes).
const ACTIONS = new Map([
  ["Next slide", "Diapositiva siguiente"],
  ["Previous slide", "Diapositiva anterior"],
  ["Navigate left", "Ir a la izquierda"],
  ["Navigate right", "Ir a la derecha"],
  ["Navigate up", "Ir arriba"],
  ["Navigate down", "Ir abajo"],
  ["Navigate without fragments", "Moverse sin pasar por las respuestas ocultas"],
  ["Jump to first/last slide", "Ir a la primera o a la última diapositiva"],
  ["Pause", "Pausa: pantalla en negro"],
  ["Fullscreen", "Pantalla completa"],
  ["Jump to slide", "Ir a una diapositiva por su número"],
  ["Slide overview", "Vista general de todas las diapositivas"],
  ["Speaker notes view", "Vista del presentador (notas)"],
]);

// Key names as reveal writes them, in Spanish keyboard terms.
const KEY_WORDS = [
  [/\bSPACE\b/g, "Espacio"],
  [/\bShift\b/g, "Mayús"],
  [/\bESC\b/g, "Esc"],
  // H opens this help in the deck (config.js); ← still goes back.
  [/\s*,\s*H$/g, ""],
];

// The keys that work in a cell (cells.js, editor.js), after reveal's.
const DECK_KEYS = [
  ["?  ,  H  ,  F1", "Esta ayuda"],
  ["Intro (en el código de una celda)", "Editar el código (Tab solo pasa por él)"],
  ["Mayús + Intro  ,  Ctrl + Intro", "En una celda: ejecutarla"],
  ["Tab  ,  Mayús + Tab (editando)", "Sangrar o quitar sangría (también Ctrl + ] y Ctrl + [)"],
  ["Esc (editando)", "Salir del editor: el foco pasa a ▶ Ejecutar"],
];

const TITLE = "Atajos de teclado";
const HEADINGS = ["Tecla", "Acción"];
const RESUME = "Reanudar la presentación";
const JUMP_PLACEHOLDER = "Ir a la diapositiva…";
const ARROW_LABELS = {
  "navigate-left": "Diapositiva anterior",
  "navigate-right": "Diapositiva siguiente",
  "navigate-up": "Diapositiva de arriba",
  "navigate-down": "Diapositiva de abajo",
};

const NOTES_HEADING = "Notas del presentador";

/** The plugin: Spanish for reveal's help overlay, pause button, jump box, arrows and printed notes. */
export function SpanishScreens() {
  return {
    id: "dpdeck-screens",
    init(reveal) {
      // The arrows and the pause screen exist once reveal has built its page.
      reveal.on("ready", () => translateScreens(reveal));
      reveal.on("pdf-ready", () => headNotesPages(reveal));
    },
  };
}

/**
 * Printed with ?print-pdf&showNotes=separate-page (or showNotes=true), each
 * slide's notes follow it; reveal heads them «Speaker notes» (a CSS label,
 * replaced in main.css). Each notes block gets a Spanish heading naming its
 * slide: «Notas del presentador · diapositiva 12: Título».
 */
function headNotesPages(reveal) {
  // In the print layout slides sit in pages: their number is their place in reading order.
  const slides = reveal.getSlides();
  for (const notes of document.querySelectorAll(".reveal .speaker-notes-pdf")) {
    const page = notes.closest(".pdf-page") || notes.previousElementSibling;
    const slide = page && page.querySelector("section");
    if (!slide) continue;
    const number = slides.indexOf(slide) + 1;
    const heading = slide.querySelector("h1, h2");
    const title = heading ? heading.textContent.replace(/\s+/g, " ").trim() : "";
    const label = document.createElement("p");
    label.className = "notes-pdf-heading";
    label.lang = "es";
    label.textContent = `${NOTES_HEADING} · diapositiva ${number}${title ? `: ${title}` : ""}`;
    notes.prepend(label);
  }
}

function translateScreens(reveal) {
  const root = reveal.getRevealElement();
  reveal.on("showhelp", () => translateHelp(root.querySelector(".r-overlay-help")));
  const resume = root.querySelector(".pause-overlay .resume-button");
  if (resume) resume.textContent = RESUME;
  for (const [name, label] of Object.entries(ARROW_LABELS)) {
    const arrow = root.querySelector(`.controls .${name}`);
    if (arrow) arrow.setAttribute("aria-label", label);
  }
  // The jump box (G) joins the page each time it opens.
  new MutationObserver(() => translateJumpBox(root)).observe(root, { childList: true });
}

function translateJumpBox(root) {
  const input = root.querySelector(".jump-to-slide-input");
  if (input && input.placeholder !== JUMP_PLACEHOLDER) input.placeholder = JUMP_PLACEHOLDER;
}

function translateHelp(overlay) {
  if (!overlay) return;
  overlay.lang = "es";
  const title = overlay.querySelector(".r-overlay-help-content .title");
  if (title) title.textContent = TITLE;
  const table = overlay.querySelector(".r-overlay-help-content table");
  if (!table) return;
  table.querySelectorAll("th").forEach((cell, index) => {
    if (HEADINGS[index]) cell.textContent = HEADINGS[index];
  });
  for (const row of table.querySelectorAll("tr")) {
    const [key, action] = row.querySelectorAll("td");
    if (!key || !action) continue;
    key.textContent = translateKeys(key.textContent);
    action.textContent = ACTIONS.get(action.textContent.trim()) || action.textContent;
  }
  const body = table.querySelector("tbody") || table;
  for (const [keys, action] of DECK_KEYS) {
    const row = document.createElement("tr");
    row.className = "deck-keys";
    for (const text of [keys, action]) {
      const cell = document.createElement("td");
      cell.textContent = text;
      row.appendChild(cell);
    }
    body.appendChild(row);
  }
  const close = overlay.querySelector(".r-overlay-close");
  // Its visible text, «Esc», is part of its name.
  if (close) close.setAttribute("aria-label", "Esc: cerrar la ayuda");
  // Taller than a small window, the list scrolls: the keyboard must reach it too.
  const content = overlay.querySelector(".r-overlay-content");
  if (content) {
    content.tabIndex = 0;
    content.setAttribute("role", "region");
    content.setAttribute("aria-label", TITLE);
  }
}

function translateKeys(text) {
  return KEY_WORDS.reduce((result, [pattern, spanish]) => result.replace(pattern, spanish), text);
}
