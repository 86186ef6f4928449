// The size of code and output in the cells, for the back of the room: a
// reveal.js plugin with keys (+, − and 0, listed in reveal's help) and the
// same three actions for the menu's buttons. The choice is a step of
// `codeSize.steps` (config.js), a factor on the size the theme gives code for
// the slide's shape (cellsizes.css: --code-zoom), remembered on this device.

import { announce } from "./announcer.js";
import { LAYOUT_CHANGED } from "./layout.js";
import { Preference } from "./preferences.js";

// Key codes: "+" and "=" share a key on many keyboards (187; Firefox 61), the
// keypad has its own (107); "-" is 189 (Firefox 173) or the keypad's 109.
const BIGGER_KEYS = [187, 61, 107];
const SMALLER_KEYS = [189, 173, 109];
const RESET_KEYS = [48, 96];

function percent(factor) {
  return `${Math.round(factor * 100)} %`;
}

/** The plugin; `change(+1 | -1)` and `reset()` are what the keys do. */
export function CodeSize() {
  let steps = [1];
  let index = 0;
  let preference = null;
  let defaultIndex = 0;

  const apply = ({ say }) => {
    const factor = steps[index];
    document.documentElement.style.setProperty("--code-zoom", String(factor));
    document.documentElement.dataset.codeSize = percent(factor).replace(" %", "");
    document.dispatchEvent(new CustomEvent(LAYOUT_CHANGED));
    if (say) announce(`Letra del código: ${percent(factor)}`);
  };

  const plugin = {
    id: "dpdeck-code-size",
    init(reveal) {
      steps = reveal.getConfig().dpdeck.codeSize.steps;
      defaultIndex = Math.max(0, steps.indexOf(1));
      preference = new Preference("code-size", (text) => (steps.includes(Number(text)) ? Number(text) : undefined));
      index = steps.indexOf(preference.load(1));
      if (index < 0) index = defaultIndex;
      apply({ say: false });
      const bind = (codes, key, description, action) =>
        codes.forEach((keyCode, position) =>
          // Only the first of each set is listed in the help.
          reveal.addKeyBinding(position === 0 ? { keyCode, key, description } : keyCode, action),
        );
      bind(BIGGER_KEYS, "+", "Letra del código más grande", () => plugin.change(+1));
      bind(SMALLER_KEYS, "−", "Letra del código más pequeña", () => plugin.change(-1));
      bind(RESET_KEYS, "0", "Letra del código a su tamaño normal", () => plugin.reset());
    },
    /** The factor in use (1: the theme's size for this slide shape). */
    get factor() {
      return steps[index];
    },
    change(direction) {
      const next = Math.min(steps.length - 1, Math.max(0, index + Math.sign(direction)));
      if (next === index) {
        announce(`Letra del código: ${percent(steps[index])} (${direction > 0 ? "máximo" : "mínimo"})`);
        return;
      }
      index = next;
      if (index === defaultIndex) preference.forget();
      else preference.save(steps[index]);
      apply({ say: true });
    },
    reset() {
      index = defaultIndex;
      preference.forget();
      apply({ say: true });
    },
  };
  return plugin;
}
