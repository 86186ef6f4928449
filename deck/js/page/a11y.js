// What the keyboard and screen readers meet besides the slide on screen, as a
// reveal.js plugin. reveal keeps the slides near the current one laid out
// (viewDistance) but only transparent: their buttons and editors would stay in
// the Tab order, focus landing on something invisible. Every slide but the
// current one is made inert (out of the Tab order and of the accessibility
// tree), except in the overview, where every slide is shown and clickable.

import { isPrintPdf } from "./page.js";

export function SlideFocus() {
  return {
    id: "dpdeck-focus",
    init(reveal) {
      if (isPrintPdf) return;
      const update = () => {
        const overview = reveal.isOverview();
        const current = reveal.getCurrentSlide();
        for (const slide of reveal.getSlides()) slide.inert = !overview && slide !== current;
      };
      for (const event of ["ready", "slidechanged", "overviewshown", "overviewhidden"]) reveal.on(event, update);
    },
  };
}
