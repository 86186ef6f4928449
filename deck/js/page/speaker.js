// The speaker view (S) in the deck's own terms: KaTeX-styled notes and Spanish
// labels. A reveal.js plugin, listed before reveal's notes plugin.
//
// reveal's notes plugin opens the speaker view with
// window.open("about:blank", "reveal.js - Notes") and fills it with
// document.write: a page of the deck's origin that loads none of the deck's
// stylesheets. Without KaTeX's stylesheet every formula in the notes shows
// twice (its MathML copy for screen readers, then the unstyled HTML), and the
// plugin's labels are in English. This plugin wraps window.open before the
// notes plugin starts (reveal starts plugins in the order they are listed, and
// ?notes opens the view at once); when the speaker window's document has been
// written (the notes plugin's own script and handshake untouched), it gets the
// stylesheet and its visible labels are translated, now and whenever the notes
// plugin rewrites them (the layout menu, the clock every second).

import { deckBaseUrl, isPrintPdf, isReceiver } from "./page.js";

const SPEAKER_WINDOW_NAME = "reveal.js - Notes";
const KATEX_STYLESHEET = "vendor/katex/katex.min.css";

// Every visible English text of reveal 5's speaker view (plugin/notes/speaker-view.html).
const LABELS = new Map([
  ["Loading speaker view...", "Cargando la vista del presentador…"],
  ["Upcoming", "Siguiente"],
  ["Time", "Tiempo"],
  ["Click to Reset", "Pulsa para reiniciar"],
  ["Pacing – Time to finish current slide", "Ritmo: tiempo para terminar esta diapositiva"],
  ["Notes", "Notas"],
  ["Default", "Normal"],
  ["Wide", "Ancha"],
  ["Tall", "Alta"],
  ["Notes only", "Solo notas"],
  ["Cross origin error.", "Error de origen:"],
  ["The speaker window can only be opened from the same origin.",
    "la vista del presentador solo se abre desde el mismo servidor que las diapositivas."],
  ["Error connecting to main window.", "No se pudo conectar con la ventana principal."],
  ["Please try closing and reopening the speaker view.", "Cierra la vista del presentador y vuelve a abrirla (tecla S)."],
]);
const LAYOUT_LABEL = /^Layout(?:: (.*))?$/;
// The plugin lays «Siguiente» (and the layout menu) over the next slide's top
// corners, on its title: a band of their own above the slide instead.
const SPEAKER_STYLE = `
  #upcoming-slide { padding-top: 46px; }
  #upcoming-slide .label { top: 6px; left: 6px; }
`;
// The plugin's clock: en-US, 12 hours ("02:05 PM").
const CLOCK = /^(\d{1,2}):(\d{2})\s*([AP]M)$/;

/** The plugin: in the deck's own window, the speaker window is dressed for the deck once written. */
export function SpeakerView() {
  return {
    id: "dpdeck-speaker",
    init() {
      if (!isReceiver && !isPrintPdf) wrapWindowOpen(deckBaseUrl);
    },
  };
}

function wrapWindowOpen(baseUrl) {
  const nativeOpen = window.open;
  window.open = function openWindow(...args) {
    const opened = nativeOpen.apply(this, args);
    if (opened && args[1] === SPEAKER_WINDOW_NAME) watchForWrite(opened, baseUrl);
    return opened;
  };
}

function watchForWrite(speaker, baseUrl) {
  let doc;
  try {
    doc = speaker.document;
  } catch {
    return; // another origin: nothing to dress
  }
  const nativeWrite = doc.write;
  doc.write = function write(...html) {
    const result = nativeWrite.apply(doc, html);
    try {
      dress(doc, baseUrl);
    } catch (error) {
      console.warn("dpdeck: vista del presentador sin traducir:", error);
    }
    return result;
  };
}

function dress(doc, baseUrl) {
  if (doc.documentElement.dataset.dpdeck) return;
  doc.documentElement.dataset.dpdeck = "speaker";
  doc.documentElement.lang = "es";
  doc.title = "Vista del presentador";
  const head = doc.head || doc.documentElement;
  const link = doc.createElement("link");
  link.rel = "stylesheet";
  // Absolute: the speaker window is about:blank and has no base of its own.
  link.href = new URL(KATEX_STYLESHEET, baseUrl).href;
  head.appendChild(link);
  const style = doc.createElement("style");
  style.textContent = SPEAKER_STYLE;
  head.appendChild(style);
  translate(doc.documentElement);
  // The plugin writes the layout label and the clock again later.
  new doc.defaultView.MutationObserver((records) => {
    for (const record of records) {
      translate(record.type === "characterData" ? record.target.parentNode : record.target);
    }
  }).observe(doc.documentElement, { subtree: true, childList: true, characterData: true });
}

function translate(root) {
  if (!root) return;
  const doc = root.ownerDocument || root;
  const walker = doc.createTreeWalker(root, doc.defaultView.NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    // The notes are the deck's own text (already Spanish); scripts are code.
    if (node.parentElement && node.parentElement.closest(".speaker-controls-notes .value, script, style")) continue;
    const text = node.nodeValue;
    const key = text.trim();
    if (!key) continue;
    const spanish = translateLabel(key);
    if (spanish !== null && spanish !== key) node.nodeValue = text.replace(key, spanish);
  }
}

function translateLabel(text) {
  if (LABELS.has(text)) return LABELS.get(text);
  const layout = LAYOUT_LABEL.exec(text);
  if (layout) return layout[1] ? `Diseño: ${LABELS.get(layout[1]) || layout[1]}` : "Diseño";
  const clock = CLOCK.exec(text);
  if (clock) {
    const hours = (Number(clock[1]) % 12) + (clock[3] === "PM" ? 12 : 0);
    return `${String(hours).padStart(2, "0")}:${clock[2]}`;
  }
  return null;
}
