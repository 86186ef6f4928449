// The cell editor: CodeMirror 6 with Python highlighting, bracket matching,
// automatic indentation and undo history.

import { EditorState, Prec } from "@codemirror/state";
import {
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightSpecialChars,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { HighlightStyle, bracketMatching, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { tags } from "@lezer/highlight";

// CodeMirror's default colours, three darkened (f-strings, type names, invalid
// code) so that every one reads at WCAG AA, 4,5:1 or more, on the cell's
// background (#f1f3f6).
const HIGHLIGHT = HighlightStyle.define([
  { tag: tags.meta, color: "#404740" },
  { tag: tags.link, textDecoration: "underline" },
  { tag: tags.heading, textDecoration: "underline", fontWeight: "bold" },
  { tag: tags.emphasis, fontStyle: "italic" },
  { tag: tags.strong, fontWeight: "bold" },
  { tag: tags.strikethrough, textDecoration: "line-through" },
  { tag: tags.keyword, color: "#708" },
  { tag: [tags.atom, tags.bool, tags.url, tags.contentSeparator, tags.labelName], color: "#219" },
  { tag: [tags.literal, tags.inserted], color: "#164" },
  { tag: [tags.string, tags.deleted], color: "#a11" },
  { tag: [tags.regexp, tags.escape, tags.special(tags.string)], color: "#a5380a" },
  { tag: tags.definition(tags.variableName), color: "#00f" },
  { tag: tags.local(tags.variableName), color: "#30a" },
  { tag: [tags.typeName, tags.namespace], color: "#00704a" },
  { tag: tags.className, color: "#167" },
  { tag: [tags.special(tags.variableName), tags.macroName], color: "#256" },
  { tag: tags.definition(tags.propertyName), color: "#00c" },
  { tag: tags.comment, color: "#940" },
  { tag: tags.invalid, color: "#c00" },
]);

/**
 * Creates an editor inside `parent`.
 * onRun(): Shift+Enter / Ctrl+Enter (Cmd+Enter on a Mac).
 * onChange(source): after every edit.
 * onLeave(): Escape, once the editor has let go of the focus.
 *
 * The code is only ever edited on purpose: Tab never stops inside it (its
 * editable area is out of the Tab order; cells.js puts a focus stop around it
 * that Enter turns into editing). Once editing — entered with Enter or a
 * click — Tab and Shift+Tab indent (also Ctrl+] and Ctrl+[), and Escape
 * leaves.
 */
export function createEditor(parent, { source, label, readOnly = false, onRun, onChange, onLeave = () => {} }) {
  const runKeys = Prec.highest(
    keymap.of([
      { key: "Shift-Enter", run: () => (onRun(), true) },
      { key: "Mod-Enter", run: () => (onRun(), true) },
      {
        key: "Escape",
        run: (view) => {
          view.contentDOM.blur();
          onLeave();
          return true;
        },
      },
    ]),
  );
  const extensions = [
    lineNumbers(),
    highlightSpecialChars(),
    history(),
    drawSelection(),
    indentOnInput(),
    indentUnit.of("    "),
    bracketMatching(),
    highlightActiveLine(),
    python(),
    syntaxHighlighting(HIGHLIGHT),
    runKeys,
    keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
    EditorView.contentAttributes.of({
      "aria-label": label,
      spellcheck: "false",
      autocapitalize: "off",
      // Out of the Tab order: editing starts with Enter on the cell's code (or a click).
      tabindex: "-1",
    }),
    EditorView.updateListener.of((update) => {
      if (update.docChanged && onChange) onChange(update.state.doc.toString());
    }),
  ];
  if (readOnly) extensions.push(EditorState.readOnly.of(true), EditorView.editable.of(false));
  return new EditorView({ parent, state: EditorState.create({ doc: source, extensions }) });
}

/** Replaces the whole text in one undoable step. */
export function replaceSource(view, source) {
  view.dispatch({
    changes: { from: 0, to: view.state.doc.length, insert: source },
    userEvent: "input.reset",
  });
}
