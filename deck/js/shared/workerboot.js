// What the page asks of a Python worker's boot, carried in the worker's name:
// a worker reads its name the moment it starts, before its boot chooses how to
// start Python (a message would arrive after that choice). The page asks one
// thing: after a Python restored from the build's snapshot broke, the next one
// starts from scratch, and the device remembers that this snapshot does not
// fit this browser (`unfit`: what broke).

const NAME = "dpdeck-python";

/**
 * How a boot knew that the build's snapshot does not fit this browser
 * (timings.snapshot.unfit): its worker found it while restoring, the page
 * told it (a restored Python broke), or the device remembered it.
 */
export const UNFIT = Object.freeze({ FOUND: "found", TOLD: "told", REMEMBERED: "remembered" });

/** The worker's name carrying `options` ({unfit}, or nothing). */
export function composeWorkerName(options = {}) {
  return options.unfit ? `${NAME} ${JSON.stringify({ unfit: String(options.unfit) })}` : NAME;
}

/** The options a worker's name carries: {unfit} or {} (any other name, a damaged one included). */
export function readWorkerName(name) {
  if (typeof name !== "string" || !name.startsWith(`${NAME} `)) return {};
  try {
    const options = JSON.parse(name.slice(NAME.length + 1));
    return options && typeof options.unfit === "string" ? { unfit: options.unfit } : {};
  } catch {
    return {};
  }
}
