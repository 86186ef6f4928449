// The deck's page script: starts reveal.js with the deck's settings
// (config.js) and its plugins, which give the page its behaviour:
//
//   dpdeck-speaker  the speaker view (S) with KaTeX and in Spanish (speaker.js);
//                   listed before reveal's notes plugin, which it prepares
//   notes           reveal's own speaker view
//   dpdeck-screens  reveal's help, pause and jump screens in Spanish (revealscreens.js)
//   dpdeck          the live cells and their Python (deck.js)

import config from "./config.js";
import { LiveCells } from "./deck.js";
import { SpanishScreens } from "./revealscreens.js";
import { SpeakerView } from "./speaker.js";

const Reveal = window.Reveal;
const plugins = [SpeakerView(), window.RevealNotes, SpanishScreens(), LiveCells()].filter(Boolean);
Reveal.initialize({ ...config, plugins }).catch((error) => console.error("dpdeck:", error));
