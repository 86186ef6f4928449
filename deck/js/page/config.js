// The deck's settings, in one place: reveal.js's own options first, then the
// deck's (`dpdeck`), which its plugins read with reveal.getConfig().dpdeck,
// the way reveal's plugins read theirs. main.js passes this object to
// Reveal.initialize as it is.
//
// A cell's limits (output characters, figures) are not here: they belong to
// the live cells' contract, shared with Python (protocol.js).

import { isReceiver } from "./page.js";

export default {
  // ---------------------------------------------------------------- reveal.js

  // reveal's postMessage API lets another window drive the deck. Only the
  // speaker view's previews (?receiver) need it, driven by the speaker view
  // itself, of the deck's own origin (main.js turns away every other origin's message).
  postMessage: isReceiver,

  // The slides are authored at 1280×720 (16:9); reveal scales them to the screen.
  width: 1280,
  height: 720,
  margin: 0.03,
  minScale: 0.2,
  maxScale: 2.0,

  // Content starts at the top of each slide (the theme sizes every section).
  center: false,

  // Each slide has its own URL (#/3), so a reload keeps your place.
  hash: true,

  // "3 / 40" in the corner: useful for questions from the back of the room.
  slideNumber: "c/t",
  showSlideNumber: "all",

  controls: true,
  progress: true,
  // No bouncing arrow until the first move: reveal's hint animates for 100 s
  // after every load, and in Safari's engine each frame repaints the page,
  // a core's worth of work taken from Python's boot. The arrows stay; H lists the keys.
  controlsTutorial: false,

  // O / Esc shows every slide at once.
  overview: true,
  // Help also on H (and reveal's own F1): «?» is Shift+' on a Spanish keyboard.
  // ← still goes back. The deck's own keys (code size, zoom, menu…) are added by
  // their plugins with reveal.addKeyBinding, so the help lists them.
  keyboard: { 72: "toggleHelp" },
  touch: true,

  // A quick fade: a cut is easier to follow on a projector than a slide-in.
  transition: "fade",
  transitionSpeed: "fast",
  backgroundTransition: "none",

  // Keep nearby slides laid out so their editors are ready when you arrive.
  viewDistance: 3,

  // ?print-pdf: one page per slide, fragments (the answers) shown.
  pdfSeparateFragments: false,
  pdfMaxPagesPerSlide: 1,

  // Speaker notes stay in the speaker view (S), never on the projected slide.
  showNotes: false,

  // ---------------------------------------------------------------- the deck

  dpdeck: {
    // When Python first becomes ready, rerun the cells on the current slide
    // (unedited ones), so what is on screen was computed in this browser.
    // ?autorun=0 in the URL turns it off for one visit.
    autorun: true,

    // Cells get their editors a few at a time when the page is idle and Python
    // neither boots nor runs a cell (those on the slide shown at once), so the
    // first slide shows without waiting and Python starts sooner (deck.js).
    cellsPerIdleBatch: 4,
    // …and only this long after Python last finished: the output just received
    // (a figure to decode and draw) comes first, and so does the next ▶.
    cellsAfterPythonMs: 1000,

    // An edit is saved in the browser this long after typing stops (and at
    // once when the page is left).
    saveDelayMs: 250,

    // A run keeps the previous output, figures included, where it is until its
    // own output is complete; what it prints shows, once it has lasted this
    // long, in a live tail laid over the bottom of that output (the slide never
    // moves, and a quick rerun shows nothing in between).
    streamAfterMs: 1000,

    // ...and marks that previous output as being recomputed only after this
    // long, so quick runs do not blink.
    recomputingMarkAfterMs: 300,

    // After Stop, how long a cell may take to notice the interrupt before
    // Python is restarted instead (the goal: idle within 2 s of Stop).
    interruptGraceMs: 1500,

    // A Python boot that shows no progress for this long has failed.
    bootStallMs: 90_000,

    // How long «Deshacer» stays offered after «Restaurar todo».
    undoRestoreMs: 10_000,

    // How long a notice with «Entendido» stays (for example: no room to save outputs).
    noticeMs: 8000,

    // Python's files are kept for use offline (offline.js), and its memory
    // snapshot on the device (python.js), once Python has been ready this long
    // with no cell running: storing them (about 27 and 63 MB) never slows the
    // first cells run after Python is ready.
    pythonCacheQuietMs: 2000,

    // A Python restored from its snapshot draws the throwaway figure of its
    // warm-up (warmup.js) once it has been ready this long with no cell
    // running: before a lecturer's first ▶, as a rule, and never in the way
    // of one pressed the moment Python is ready.
    pythonWarmQuietMs: 500,

    // The last run of an edited cell is saved with its edit (savedoutputs.js).
    // Its figures, as base64 PNG, are kept up to this many characters per cell
    // (a slide's figure is about 60 000); past it only the text is saved.
    savedFigureChars: 600_000,
    // All saved outputs of the deck together stay under this many characters
    // (localStorage holds about 5 million per site, and the edits come first):
    // the oldest go first.
    savedOutputsChars: 2_500_000,

    // How the slides fill the window (layout.js).
    layout: {
      // A window taller than 16:9 (a 4:3 projector) gets a slide this tall at
      // most (1280×960 is 4:3); the theme gives the extra room to the cells.
      maxSlideHeight: 960,
      // A window whose short side is below this (a phone, either way up)...
      reflowBelowShortSide: 500,
      // ...or an upright window narrower than this (a tablet held upright)
      // shows each slide as a scrolling page at the window's own width.
      reflowUprightBelowWidth: 1000,
    },

    // Code and output size in the cells (codesize.js): factors on the theme's
    // size, one step per + or − key; 1 is the default.
    codeSize: {
      steps: [0.7, 0.8, 0.9, 1, 1.15, 1.3, 1.5, 1.75, 2],
    },

    // How long the message that an edit could not be saved (full browser
    // storage) stays, with its «Descargar .py» button.
    unsavedNoticeMs: 20_000,
  },
};
