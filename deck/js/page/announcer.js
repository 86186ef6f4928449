// What the deck tells screen readers without moving focus: one polite live
// region for the whole page (a run's result, a new code size). Visually
// hidden; status.css gives it its class.

let region = null;

function liveRegion() {
  if (region && region.isConnected) return region;
  region = document.createElement("div");
  region.className = "deck-announcer";
  region.setAttribute("role", "status");
  region.setAttribute("aria-live", "polite");
  region.setAttribute("aria-atomic", "true");
  document.body.appendChild(region);
  return region;
}

/** Says `text` politely (after what the reader is saying now). */
export function announce(text) {
  const element = liveRegion();
  // A repeat of the same words must be said again: empty the region first.
  element.textContent = "";
  requestAnimationFrame(() => {
    element.textContent = text;
  });
}

/** The last thing announced (for scripts and tests). */
export function lastAnnouncement() {
  return region ? region.textContent : "";
}
