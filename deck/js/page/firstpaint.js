// The page's first script, inlined at the top of index.html by the build: it
// runs before the slides are parsed and before any script file is fetched.
//
// 1. Python's worker starts now, so Pyodide downloads and compiles while the
//    page is still loading (earlyworker.js; the deck's runtime adopts it) —
//    unless this device downloads Python only for a run (pythonchoice.js).
// 2. The slide the URL names is painted as soon as the browser has parsed it,
//    laid out exactly as reveal.js will lay it out: this script marks
//    <html class="dp-first-paint"> and the slide .dp-first-paint-slide, and
//    css/firstpaint.css shows it until reveal.js marks its wrapper .ready and
//    takes over with the same box, scale and position.

import config from "./config.js";
import { startEarlyWorker } from "./earlyworker.js";
import { LAYOUT, applyLayout, windowLayout } from "./layout.js";
import { isPrintPdf, isReceiver } from "./page.js";
import { downloadsOnOpen } from "./pythonchoice.js";

const ROOT_CLASS = "dp-first-paint";
const SLIDE_CLASS = "dp-first-paint-slide";

/** The scale reveal.js gives the slides in a window of this size (its layout(), without zoom). */
export function computeSlideScale(windowWidth, windowHeight, settings = config) {
  const available = 1 - settings.margin;
  const scale = Math.min((windowWidth * available) / settings.width, (windowHeight * available) / settings.height);
  return Math.min(settings.maxScale, Math.max(settings.minScale, scale));
}

/**
 * Which top-level slide a reveal.js URL hash names: {index} for "", "#/" and
 * "#/3" (or "#/3/0"), {id} for "#/nombre"; null for a vertical slide or a
 * fragment step, which reveal.js alone shows.
 */
export function readFirstSlide(hash) {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  if (parts.length === 0) return { index: 0 };
  if (parts.slice(1).some((part) => part !== "0")) return null;
  if (/^\d+$/.test(parts[0])) return { index: Number(parts[0]) };
  try {
    return { id: decodeURIComponent(parts[0]) };
  } catch {
    return null;
  }
}

function findSlide(target) {
  if (target.id !== undefined) {
    const element = document.getElementById(target.id);
    return element && element.matches(".reveal > .slides > section") ? element : null;
  }
  return document.querySelectorAll(".reveal > .slides > section")[target.index] || null;
}

function paintFirstSlide() {
  const target = readFirstSlide(window.location.hash);
  if (!target) return;
  const root = document.documentElement;
  // The layout the window gets (layout.js): a taller slide in a 4:3 window, a
  // page at the window's own size, unscaled, on a phone.
  const { layout, slideHeight } = windowLayout();
  const reflow = layout === LAYOUT.REFLOW;
  const scale = reflow ? 1 : computeSlideScale(window.innerWidth, window.innerHeight, { ...config, height: slideHeight });
  root.style.setProperty("--dp-first-paint-scale", String(scale));
  root.style.setProperty("--dp-first-paint-width", reflow ? "100%" : `${config.width}px`);
  root.style.setProperty("--dp-first-paint-height", reflow ? "100%" : `${slideHeight}px`);
  root.classList.add(ROOT_CLASS);
  // The slides are parsed after this script runs: the slide is marked the moment it exists.
  const observer = new MutationObserver(() => {
    const slide = findSlide(target);
    if (!slide) return;
    slide.classList.add(SLIDE_CLASS);
    observer.disconnect();
  });
  observer.observe(root, { childList: true, subtree: true });
  document.addEventListener("DOMContentLoaded", () => observer.disconnect(), { once: true });
}

// The slide's shape and layout on <html>, before any slide is parsed (layout.js).
applyLayout(windowLayout());
// Python starts downloading now, unless this device waits for a run (pythonchoice.js).
if (downloadsOnOpen()) startEarlyWorker();
if (!isPrintPdf && !isReceiver) paintFirstSlide();
