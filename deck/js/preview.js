// Inlined at the top of the page: the slide the URL names is painted as soon as
// the browser has parsed it, laid out exactly as reveal.js will lay it out, so
// the first slide is on screen before any script but this one has run. It
// adds html.dp-preview and marks the slide .dp-preview-slide; css/preview.css
// shows it until reveal.js marks its wrapper .ready and takes over. It also
// starts Python's worker (earlyworker.js).

import { startEarlyWorker } from "./earlyworker.js";
import { SLIDE_GEOMETRY, computeSlideScale } from "./geometry.js";
import { isPrintPdf, isReceiver } from "./page.js";

/**
 * Which top-level slide a reveal.js URL hash names: {index} for "", "#/", "#/3"
 * (or "#/3/0"), {id} for "#/nombre"; null for a vertical slide or a fragment
 * step, which reveal.js alone can show.
 */
export function readPreviewTarget(hash) {
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

function startPreview() {
  const target = readPreviewTarget(window.location.hash);
  if (!target) return;
  const root = document.documentElement;
  root.style.setProperty("--dp-preview-scale", String(computeSlideScale(window.innerWidth, window.innerHeight)));
  root.style.setProperty("--dp-slide-width", `${SLIDE_GEOMETRY.width}px`);
  root.style.setProperty("--dp-slide-height", `${SLIDE_GEOMETRY.height}px`);
  root.classList.add("dp-preview");
  // The slides are parsed after this script: mark the slide the moment it exists.
  const observer = new MutationObserver(() => {
    const slide = findSlide(target);
    if (!slide) return;
    slide.classList.add("dp-preview-slide");
    observer.disconnect();
  });
  observer.observe(root, { childList: true, subtree: true });
  document.addEventListener("DOMContentLoaded", () => observer.disconnect(), { once: true });
}

startEarlyWorker();
if (!isPrintPdf && !isReceiver) startPreview();
