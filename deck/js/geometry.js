// The slide geometry, in one place: reveal.js lays the slides out with it
// (main.js) and the page's first paint copies that layout before reveal runs
// (preview.js).

/** Slides are authored at 1280×720 (16:9) and scaled to the window, keeping a 3 % margin. */
export const SLIDE_GEOMETRY = {
  width: 1280,
  height: 720,
  margin: 0.03,
  minScale: 0.2,
  maxScale: 2.0,
};

/** The scale reveal.js gives the slides in a window of this size (its layout(), without zoom). */
export function computeSlideScale(windowWidth, windowHeight, geometry = SLIDE_GEOMETRY) {
  const available = 1 - geometry.margin;
  const scale = Math.min((windowWidth * available) / geometry.width, (windowHeight * available) / geometry.height);
  return Math.min(geometry.maxScale, Math.max(geometry.minScale, scale));
}
