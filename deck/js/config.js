// The deck's settings, in one place: reveal.js's own options first, then the
// deck's (`dpdeck`), which its plugins read with reveal.getConfig().dpdeck,
// the way reveal's plugins read theirs. main.js passes this object to
// Reveal.initialize as it is.
//
// A cell's limits (output characters, figures) are not here: they belong to
// the live cells' contract, shared with Python (protocol.js).

export default {
  // ---------------------------------------------------------------- reveal.js

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

  // O / Esc shows every slide at once.
  overview: true,
  keyboard: true,
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

    // Cells get their editors a few at a time when the page is idle (those on
    // the first slide at once), so the first slide shows without waiting.
    cellsPerIdleBatch: 4,

    // An edit is saved in the browser this long after typing stops (and at
    // once when the page is left).
    saveDelayMs: 250,

    // A run keeps the previous output on screen until its own text has been
    // coming for this long (or it ends): a quick rerun never blanks a cell.
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

    // How long the message that an edit could not be saved (full browser
    // storage) stays, with its «Descargar .py» button.
    unsavedNoticeMs: 20_000,
  },
};
