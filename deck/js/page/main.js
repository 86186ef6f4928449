// The deck's page script: starts reveal.js with the deck's settings
// (config.js) and its plugins, which give the page its behaviour:
//
//   dpdeck-speaker  the speaker view (S) with KaTeX and in Spanish (speaker.js);
//                   listed before reveal's notes plugin, which it prepares
//   notes           reveal's own speaker view
//   dpdeck-screens  reveal's help, pause and jump screens in Spanish (revealscreens.js)
//   dpdeck-layout   how slides fill the window: taller slides on 4:3, pages on phones (layout.js)
//   dpdeck-code-size  code size keys, remembered (codesize.js)
//   dpdeck-zoom     one cell as large as the window allows (Z; cellzoom.js)
//   dpdeck-menu     chapters and slides, search, a link to share (M; menu.js)
//   dpdeck-offline  the service worker that keeps the deck for use offline (offline.js)
//   dpdeck-focus    only the slide on screen takes focus (a11y.js)
//   dpdeck          the live cells and their Python (deck.js)
//   dpdeck-exercises  «Comprobar», hints and solutions of the exercises (exercises.js)
//   dpdeck-tools    copy and download a cell, run a slide or a chapter, the chapter's notebook (celltools.js)
//   dpdeck-prompts  a cell's «Prueba esto»: its keys, and open in ?print-pdf (prompts.js)
//   dpdeck-predictions  «Predice antes de ejecutar»: a cell's output behind its question until it runs (predictions.js)
//   dpdeck-work     «Exportar mi trabajo» (in the menu): a student's work for the lecturer (classwork.js)
//   dpdeck-follow   «Seguir al profesor» on `build.py serve`, and the lecturer's slides published (follow.js)
//
// The speaker view's previews show what this window's cells show and drive its
// Python through the `dpdeck` plugin (mirror.js).
//
// The slide's shape depends on the window, so layout.js is asked for it before reveal starts.

import { CellToolsPlugin } from "./celltools.js";
import config from "./config.js";
import { CellZoom } from "./cellzoom.js";
import { CodeSize } from "./codesize.js";
import { LiveCells } from "./deck.js";
import { SlideFocus } from "./a11y.js";
import { Exercises } from "./exercises.js";
import { DeckMenu } from "./menu.js";
import { OfflineDeck } from "./offline.js";
import { CellPrompts } from "./prompts.js";
import { ClassWork } from "./classwork.js";
import { FollowLecturer } from "./follow.js";
import { Predictions } from "./predictions.js";
import { SlideLayout, initialLayout } from "./layout.js";
import { SpanishScreens } from "./revealscreens.js";
import { SpeakerView } from "./speaker.js";

// A message from a window of another origin (a page that frames the deck) reaches
// none of the deck's listeners, reveal.js's included: this one runs first and stops it.
window.addEventListener(
  "message",
  (event) => {
    if (event.origin !== window.location.origin) event.stopImmediatePropagation();
  },
  { capture: true },
);

const Reveal = window.Reveal;
const plugins = [
  SpeakerView(),
  window.RevealNotes,
  SpanishScreens(),
  SlideLayout(),
  CodeSize(),
  CellZoom(),
  DeckMenu(),
  OfflineDeck(),
  SlideFocus(),
  LiveCells(),
  Exercises(),
  CellToolsPlugin(),
  CellPrompts(),
  Predictions(),
  ClassWork(),
  FollowLecturer(),
].filter(Boolean);
Reveal.initialize({ ...config, ...initialLayout(), plugins }).catch((error) => console.error("dpdeck:", error));
