// How the slides fill the window, as a reveal.js plugin.
//
// Two layouts, written on <html data-layout>:
//
//   slides  reveal's own: every slide drawn at its authored width (1280 px)
//           and scaled to the window. A window taller than 16:9 — a 4:3
//           projector — gets a taller slide (up to 1280×960) instead of black
//           bands: the room goes to the cells, whose code and output grow with
//           the slide's height (cellsizes.css, from --dp-slide-height), so a 1024×768
//           projector shows code at 18 px instead of 13.
//   reflow  a phone, or a tablet held upright: reveal stops scaling (its
//           layout is disabled) and each slide is a page of the window's
//           width that scrolls, with text and code at their own readable
//           sizes (reflow.css, «Pantallas pequeñas»). reveal's own fallback
//           for narrow windows (its scroll view) is turned off: it shrinks the
//           1280 px slide to the phone's width (code at 5 px) and rebuilds the
//           slides' markup, which the live cells cannot survive.
//
// The page's first script (firstpaint.js) applies the layout before the slides
// are parsed, so the first slide is painted as reveal will lay it out; main.js
// asks `initialLayout` for the reveal options before reveal starts; the plugin
// follows the window when it is resized or turned.

import config from "./config.js";
import { isPrintPdf, isReceiver } from "./page.js";

// Print and the speaker view's mirrors keep the authored 16:9 slide.
const FIXED = isPrintPdf || isReceiver;

export const LAYOUT = Object.freeze({ SLIDES: "slides", REFLOW: "reflow" });
/** Dispatched on document when the room the cells have changes (slide height, layout, code size). */
export const LAYOUT_CHANGED = "dpdeck:layout";

/**
 * The layout for a window of `width`×`height` CSS pixels. settings: the
 * deck's `layout` settings (config.js).
 */
export function chooseLayout(width, height, settings) {
  if (FIXED) return LAYOUT.SLIDES;
  const phone = Math.min(width, height) < settings.reflowBelowShortSide;
  const upright = height > width && width < settings.reflowUprightBelowWidth;
  return phone || upright ? LAYOUT.REFLOW : LAYOUT.SLIDES;
}

/**
 * The slide's height for a window: the authored height (16:9), or taller up
 * to `maxSlideHeight` when the window is taller than the slide's shape.
 */
export function slideHeightFor(width, height, { slideWidth, slideHeight, maxSlideHeight }) {
  if (FIXED || !width || !height) return slideHeight;
  const fitting = Math.round((slideWidth * height) / width);
  return Math.min(maxSlideHeight, Math.max(slideHeight, fitting));
}

/** The layout and the slide's height for a window (config.js holds the authored size). */
export function windowLayout(width = window.innerWidth, height = window.innerHeight) {
  const settings = config.dpdeck.layout;
  const layout = chooseLayout(width, height, settings);
  const slideHeight =
    layout === LAYOUT.SLIDES
      ? slideHeightFor(width, height, {
          slideWidth: config.width,
          slideHeight: config.height,
          maxSlideHeight: settings.maxSlideHeight,
        })
      : config.height;
  return { layout, slideHeight };
}

/** reveal options for the window as it is now; main.js merges them into the deck's settings. */
export function initialLayout() {
  const state = windowLayout();
  applyLayout(state);
  return revealOptions(state);
}

function revealOptions({ layout, slideHeight }) {
  const reflow = layout === LAYOUT.REFLOW;
  return {
    height: slideHeight,
    disableLayout: reflow,
    // reveal's scroll view would take over narrow windows; the reflow layout does instead.
    scrollActivationWidth: null,
    // In the reflow layout a slide scrolls up and down; sideways swipes still change
    // slides (the plugin's own, since reveal's touch handler blocks scrolling).
    touch: reflow ? false : config.touch,
    center: reflow ? false : config.center,
  };
}

/** The page's side of a layout: <html data-layout> and the slide height the theme sizes cells by. */
export function applyLayout({ layout, slideHeight }) {
  const root = document.documentElement;
  root.dataset.layout = layout;
  root.dataset.slideShape = slideHeight > config.height ? "tall" : "wide";
  root.style.setProperty("--dp-slide-height", `${slideHeight}px`);
}

function clearScaling(slides) {
  for (const property of ["width", "height", "left", "top", "right", "bottom", "zoom", "transform"]) {
    slides.style.removeProperty(property);
  }
}

// A sideways swipe this long (and mostly sideways) changes slide in the reflow layout.
const SWIPE_MIN_PX = 60;

function watchSwipes(reveal) {
  let start = null;
  const root = reveal.getRevealElement();
  root.addEventListener(
    "touchstart",
    (event) => {
      const touch = event.touches.length === 1 ? event.touches[0] : null;
      // Inside a cell a swipe scrolls its code or output.
      start = touch && !event.target.closest("[data-prevent-swipe]") ? { x: touch.clientX, y: touch.clientY } : null;
    },
    { passive: true },
  );
  root.addEventListener(
    "touchend",
    (event) => {
      if (!start || document.documentElement.dataset.layout !== LAYOUT.REFLOW) return;
      const touch = event.changedTouches[0];
      const dx = touch.clientX - start.x;
      const dy = touch.clientY - start.y;
      start = null;
      if (Math.abs(dx) < SWIPE_MIN_PX || Math.abs(dx) < 2 * Math.abs(dy)) return;
      if (dx < 0) reveal.next();
      else reveal.prev();
    },
    { passive: true },
  );
}

/** The plugin: follows the window (resize, rotation) between layouts and slide heights. */
export function SlideLayout() {
  return {
    id: "dpdeck-layout",
    init(reveal) {
      let current = windowLayout();
      watchSwipes(reveal);
      if (FIXED) return;
      window.addEventListener("resize", () => {
        const next = windowLayout();
        if (next.layout === current.layout && next.slideHeight === current.slideHeight) return;
        current = next;
        applyLayout(next);
        reveal.configure(revealOptions(next));
        // reveal leaves the scaled slide's size and transform in place when its
        // layout is turned off: the page's width is the slides' width again.
        if (next.layout === LAYOUT.REFLOW) clearScaling(reveal.getSlidesElement());
        // Each slide starts at its top again in the reflow layout.
        document.dispatchEvent(new CustomEvent(LAYOUT_CHANGED));
      });
    },
  };
}
