// The deck's menu, as a reveal.js plugin: every slide by chapter, each
// chapter with its two worksheets to take home (the exercises blank and
// solved, as Jupyter notebooks), a search across the slides, a link to the
// current slide to share (with a copy button), the code size, «Restaurar
// todo» for the cells one edited, whether Python downloads on opening, and
// «Exportar mi trabajo» with the student's name (classwork.js). M (or the ☰
// button in the top corner) opens it, Ctrl+Shift+F opens it on the search,
// Esc closes it.
//
// Built on reveal's API (getSlides, getIndices, slide, getSlidePath). The
// search reads each slide's text once and never touches the slides' markup
// (reveal's own search plugin highlights by rewriting every text node of the
// page, editors included, and unwraps every <em> when it closes).

import { announce } from "./announcer.js";
import { flashButton } from "./celltools.js";
import { WORKSHEETS, downloadWorksheet, loadIndex, worksheetOf } from "./notebooks.js";
import { deckBaseUrl, isPrintPdf, isReceiver, pythonAllowed } from "./page.js";
import { downloadMegabytes, downloadsOnOpen, setDownloadsOnOpen } from "./pythonchoice.js";

const M_KEY = 77;
const F_KEY = 70;
// Results shown for a search; a longer list is cut with a note.
const MAX_RESULTS = 40;
// Characters of context on each side of a match.
const SNIPPET_CHARS = 50;
// What a slide's search text leaves out: notes, KaTeX's MathML copy, the editor (its code
// is read from the original source), the cells' buttons and live tail.
const NOT_SEARCHED = "aside.notes, .katex-mathml, .cell-editor, .cell-toolbar, .cell-live, script, style";

/** Lower case, without accents, one character per character: «Código» → «codigo». */
function fold(text) {
  return Array.from(text, (character) => character.normalize("NFD")[0].toLowerCase());
}

function slideTitle(slide, number) {
  const heading = slide.querySelector("h1, h2");
  return (heading && textOf(heading)) || `Diapositiva ${number}`;
}

/** The text a reader sees in `root` (KaTeX's MathML copy, notes and editors left out). */
function textOf(root) {
  const parts = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest(NOT_SEARCHED)) continue;
    parts.push(node.textContent);
  }
  return parts.join(" ").replace(/\s+/g, " ").trim();
}

function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

function button(className, text, onPress) {
  const made = element("button", className, text);
  made.type = "button";
  made.addEventListener("click", onPress);
  return made;
}

export function DeckMenu() {
  let reveal = null;
  let dialog = null;
  let index = null; // [{number, h, title, chapter, text, folded}]
  let parts = {};

  const readSlides = () => {
    if (index) return index;
    let chapter = "";
    let previousFile = null;
    index = reveal.getSlides().map((slide, position) => {
      const number = position + 1;
      const title = slideTitle(slide, number);
      const file = (slide.dataset.source || "").split(":")[0];
      // A chapter opens with its title slide, or with a new source file.
      if (slide.classList.contains("capitulo") || position === 0 || (file && file !== previousFile)) chapter = title;
      previousFile = file;
      const text = textOf(slide);
      return { number, h: reveal.getIndices(slide).h, title, chapter, file, text, folded: fold(text) };
    });
    return index;
  };

  const goTo = (entry) => {
    plugin.close();
    reveal.slide(entry.h);
  };

  const slideButton = (entry, snippet = null) => {
    const item = element("li");
    const link = button("deck-menu-slide", "", () => goTo(entry));
    link.dataset.slide = String(entry.number);
    link.append(element("span", "deck-menu-number", String(entry.number)), element("span", "deck-menu-title", entry.title));
    if (snippet) link.append(element("span", "deck-menu-snippet", snippet));
    item.append(link);
    return item;
  };

  const worksheetLink = (chapter, flavour, heading) => {
    const { url, name } = worksheetOf(chapter, flavour, deckBaseUrl);
    const link = element("a", "deck-menu-worksheet", `${WORKSHEETS[flavour].text} (.ipynb)`);
    link.href = url;
    link.download = name;
    link.dataset.worksheet = flavour;
    link.title = `Cuaderno Jupyter con ${WORKSHEETS[flavour].title}`;
    link.setAttribute("aria-label", `${WORKSHEETS[flavour].text} de «${heading}» (cuaderno Jupyter, ${name})`);
    link.addEventListener("click", async (event) => {
      event.preventDefault();
      try {
        await downloadWorksheet({ url, name });
        flashButton(link, "Descargado ✓", true);
        announce(`Descargado ${name}.`);
      } catch (error) {
        flashButton(link, "No se pudo descargar", false);
        announce(error.message);
      }
    });
    return link;
  };

  // Each chapter of notebooks/index.json under the heading of the group that holds its own
  // file (the one with its exercises): the cover's group has none, the closing one its own.
  const addWorksheets = (groups) => {
    loadIndex(deckBaseUrl).then((notebooks) => {
      for (const chapter of notebooks.chapters || []) {
        const group = groups.find(({ files }) => files.has(`${chapter.name}.md`));
        if (!group || group.section.querySelector(".deck-menu-worksheets")) continue;
        const row = element("p", "deck-menu-worksheets");
        row.dataset.chapter = chapter.name;
        row.append(worksheetLink(chapter, "student", group.heading), worksheetLink(chapter, "solution", group.heading));
        group.section.querySelector("h3").after(row);
      }
    }, () => {
      /* without the index (a page opened as a file), the menu has no worksheets */
    });
  };

  const renderIndex = () => {
    const list = parts.index;
    list.replaceChildren();
    const groups = [];
    let group = null;
    let chapter = null;
    for (const entry of readSlides()) {
      if (entry.chapter !== chapter) {
        chapter = entry.chapter;
        const section = element("li", "deck-menu-chapter");
        section.append(element("h3", "", chapter));
        group = element("ol");
        section.append(group);
        list.append(section);
        groups.push({ section, heading: chapter, files: new Set() });
      }
      groups[groups.length - 1].files.add(entry.file);
      group.append(slideButton(entry));
    }
    addWorksheets(groups);
    markCurrent();
  };

  const markCurrent = () => {
    if (!dialog) return;
    const current = String(reveal.getIndices().h + 1);
    dialog.querySelectorAll(".deck-menu-index .deck-menu-slide").forEach((link) => {
      if (link.dataset.slide === current) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    });
    parts.link.value = plugin.currentLink();
  };

  const search = (query) => {
    const words = query.trim().split(/\s+/).filter(Boolean).map((word) => fold(word).join(""));
    const results = parts.results;
    results.replaceChildren();
    parts.index.hidden = words.length > 0;
    results.hidden = words.length === 0;
    if (!words.length) {
      parts.count.textContent = "";
      return [];
    }
    const found = [];
    for (const entry of readSlides()) {
      const haystack = entry.folded.join("");
      if (!words.every((word) => haystack.includes(word))) continue;
      const at = haystack.indexOf(words[0]);
      const start = Math.max(0, at - SNIPPET_CHARS);
      const end = Math.min(entry.folded.length, at + words[0].length + SNIPPET_CHARS);
      const chars = Array.from(entry.text);
      const snippet = `${start > 0 ? "…" : ""}${chars.slice(start, end).join("")}${end < chars.length ? "…" : ""}`;
      found.push({ entry, snippet });
    }
    found.slice(0, MAX_RESULTS).forEach(({ entry, snippet }) => results.append(slideButton(entry, snippet)));
    const count = found.length;
    parts.count.textContent =
      count === 0
        ? "Ninguna diapositiva lo contiene."
        : `${count === 1 ? "1 diapositiva" : `${count} diapositivas`}${count > MAX_RESULTS ? ` (se muestran ${MAX_RESULTS})` : ""}.`;
    return found;
  };

  const copyLink = async () => {
    const link = plugin.currentLink();
    let copied = false;
    try {
      await navigator.clipboard.writeText(link);
      copied = true;
    } catch {
      // No clipboard API (a page that is not https or localhost): the selection way.
      parts.link.select();
      copied = document.execCommand && document.execCommand("copy");
    }
    parts.copy.textContent = copied ? "¡Copiado!" : "Selecciónalo y cópialo";
    announce(copied ? "Enlace a esta diapositiva copiado." : "No se pudo copiar: el enlace está seleccionado.");
    setTimeout(() => {
      parts.copy.textContent = "Copiar";
    }, 2500);
  };

  // «Exportar mi trabajo»: the student's name (kept on this device) and the button (classwork.js).
  const buildWorkRow = () => {
    const work = reveal.getPlugin("dpdeck-work");
    if (!work || !work.available) return null;
    const row = element("div", "deck-menu-row deck-menu-work");
    const label = element("label", "deck-menu-label", "Tu nombre");
    const name = element("input", "deck-menu-name");
    name.id = "deck-menu-name";
    name.autocomplete = "name";
    name.placeholder = "para tu profesor";
    name.maxLength = 120;
    label.htmlFor = name.id;
    name.addEventListener("input", () => {
      work.studentName = name.value;
    });
    const exportButton = button("deck-menu-export", "Exportar mi trabajo", () => {
      try {
        work.exportWork();
        flashButton(exportButton, "Descargado ✓", true);
      } catch (error) {
        console.error("dpdeck: exportar el trabajo:", error);
        flashButton(exportButton, "No se pudo exportar", false);
      }
    });
    exportButton.dataset.action = "export-work";
    exportButton.title = "Un archivo JSON con tus ediciones, tus ejercicios, el reto y tus predicciones, para tu profesor";
    row.append(label, name, exportButton);
    parts.studentName = name;
    parts.studentWork = work;
    return row;
  };

  const build = () => {
    dialog = element("dialog", "deck-menu");
    dialog.setAttribute("aria-label", "Índice de las diapositivas");
    dialog.lang = "es";

    const header = element("div", "deck-menu-header");
    header.append(element("h2", "", "Índice"), button("deck-menu-close", "✕", () => plugin.close()));
    header.lastChild.setAttribute("aria-label", "Cerrar el índice");
    header.lastChild.dataset.action = "close-menu";

    const searchLabel = element("label", "deck-menu-label", "Buscar en las diapositivas");
    const input = element("input", "deck-menu-search");
    input.type = "search";
    input.id = "deck-menu-search";
    input.autocomplete = "off";
    input.spellcheck = false;
    searchLabel.htmlFor = input.id;
    input.addEventListener("input", () => search(input.value));
    input.addEventListener("keydown", (event) => {
      if (event.key !== "Enter") return;
      const first = parts.results.querySelector(".deck-menu-slide");
      if (first) first.click();
    });
    const count = element("p", "deck-menu-count");
    count.setAttribute("role", "status");

    const shareLabel = element("label", "deck-menu-label", "Enlace a esta diapositiva");
    const link = element("input", "deck-menu-link");
    link.id = "deck-menu-link";
    link.readOnly = true;
    shareLabel.htmlFor = link.id;
    link.addEventListener("focus", () => link.select());
    const copy = button("deck-menu-copy", "Copiar", copyLink);
    copy.dataset.action = "copy-link";
    const share = element("div", "deck-menu-share");
    share.append(link, copy);

    const sizes = element("div", "deck-menu-row");
    const sizeValue = element("span", "deck-menu-size");
    const codeSize = () => reveal.getPlugin("dpdeck-code-size");
    const showSize = () => {
      sizeValue.textContent = `${Math.round((codeSize()?.factor || 1) * 100)} %`;
    };
    const smaller = button("deck-menu-step", "A−", () => (codeSize()?.change(-1), showSize()));
    const bigger = button("deck-menu-step", "A+", () => (codeSize()?.change(+1), showSize()));
    smaller.setAttribute("aria-label", "A−: letra del código más pequeña (tecla −)");
    bigger.setAttribute("aria-label", "A+: letra del código más grande (tecla +)");
    smaller.dataset.action = "code-smaller";
    bigger.dataset.action = "code-bigger";
    sizes.append(element("span", "deck-menu-label", "Letra del código"), smaller, sizeValue, bigger);
    parts.showSize = showSize;

    const python = element("label", "deck-menu-row deck-menu-python");
    const checkbox = element("input");
    checkbox.type = "checkbox";
    checkbox.dataset.action = "download-python";
    checkbox.addEventListener("change", () => setDownloadsOnOpen(checkbox.checked));
    const pythonText = element("span", "", "Descargar Python al abrir las diapositivas");
    python.append(checkbox, pythonText);
    python.hidden = !pythonAllowed;
    downloadMegabytes(deckBaseUrl).then((megabytes) => {
      if (megabytes) pythonText.textContent += ` (unos ${megabytes} MB)`;
    });
    parts.checkbox = checkbox;
    const work = buildWorkRow();

    // «Restaurar todo» is also here, where a student looks for what the deck can do (not only in the chip).
    const edits = element("div", "deck-menu-row deck-menu-edits");
    const editedCount = element("span", "deck-menu-label");
    const restore = button("deck-menu-step deck-menu-restore", "Restaurar todo", () => {
      plugin.close();
      reveal.getPlugin("dpdeck")?.restoreAll();
    });
    restore.dataset.action = "restore-all";
    restore.title = "Devolver todas las celdas a su código original (se puede deshacer durante unos segundos)";
    edits.append(editedCount, restore);
    parts.showEdits = () => {
      const count = reveal.getPlugin("dpdeck")?.editedCells || 0;
      editedCount.textContent =
        count === 0 ? "Ninguna celda editada" : count === 1 ? "1 celda editada" : `${count} celdas editadas`;
      restore.disabled = count === 0;
    };

    const results = element("ol", "deck-menu-results");
    results.hidden = true;
    const list = element("ol", "deck-menu-index");
    const body = element("div", "deck-menu-body");
    body.append(searchLabel, input, count, results, list);
    const footer = element("div", "deck-menu-footer");
    footer.append(shareLabel, share, sizes, edits, python, ...(work ? [work] : []));

    dialog.append(header, body, footer);
    // Keys typed in the menu are not slide navigation; Esc always closes it
    // (in the search box too, where it would only empty the box).
    dialog.addEventListener("keydown", (event) => {
      event.stopPropagation();
      if (event.key === "Escape") {
        event.preventDefault();
        plugin.close();
      }
    });
    dialog.addEventListener("click", (event) => {
      // A click on the backdrop (outside the panel) closes it.
      if (event.target === dialog) plugin.close();
    });
    document.body.append(dialog);
    parts = { ...parts, input, count, results, index: list, link, copy };
    renderIndex();
  };

  const plugin = {
    id: "dpdeck-menu",
    init(deck) {
      reveal = deck;
      if (isPrintPdf || isReceiver) return;
      const opener = button("deck-menu-button", "☰", () => plugin.open());
      opener.setAttribute("aria-label", "Índice, búsqueda y enlace a esta diapositiva (M)");
      opener.title = "Índice, búsqueda y enlace (M)";
      opener.setAttribute("aria-haspopup", "dialog");
      opener.dataset.action = "open-menu";
      document.body.append(opener);
      reveal.addKeyBinding({ keyCode: M_KEY, key: "M", description: "Índice, búsqueda y enlace a esta diapositiva" }, () =>
        plugin.open(),
      );
      // reveal's own search key.
      document.addEventListener("keydown", (event) => {
        if (event.keyCode === F_KEY && event.shiftKey && (event.ctrlKey || event.metaKey)) {
          event.preventDefault();
          plugin.open({ search: true });
        }
      });
      reveal.registerKeyboardShortcut("Ctrl + Mayús + F", "Buscar en las diapositivas");
      reveal.on("slidechanged", markCurrent);
    },
    /** The address of the current slide (reveal's hash), without the page's query. */
    currentLink() {
      const url = new URL(window.location.href);
      url.search = "";
      url.hash = reveal.getSlidePath();
      return url.href;
    },
    get isOpen() {
      return Boolean(dialog && dialog.open);
    },
    open({ search: focusSearch = false } = {}) {
      if (!dialog) build();
      if (dialog.open) return;
      parts.checkbox.checked = downloadsOnOpen();
      if (parts.studentName) parts.studentName.value = parts.studentWork.studentName;
      parts.showSize();
      parts.showEdits();
      // Each opening starts from the index, not from the last search.
      parts.input.value = "";
      search("");
      markCurrent();
      dialog.showModal();
      // The search has the focus (typing searches at once); the current slide is in view.
      const current = dialog.querySelector(".deck-menu-index [aria-current]");
      if (current && !focusSearch) current.scrollIntoView({ block: "center" });
      parts.input.focus();
      parts.input.select();
    },
    close() {
      if (dialog && dialog.open) dialog.close();
    },
    /** The slides whose text holds every word of `query` (accents and case ignored). */
    search(query) {
      if (!dialog) build();
      return search(query).map(({ entry, snippet }) => ({ slide: entry.number, title: entry.title, snippet }));
    },
  };
  return plugin;
}
