// The live cells' contract, seen from the page and the worker: a cell's
// limits, the request and event types, the boot stages, how a run ends, and
// the output kinds with their HTML markup. And the classroom's: the messages
// between the deck and its speaker view (MIRROR_*), the channel students
// follow the lecturer on (FOLLOW) and a student's exported work (WORK).
//
// Every value is written once, in py/dpdeck/classroom/protocol.json, which the dpdeck
// package ships (Python reads it through dpdeck.classroom.protocol) and esbuild bundles
// in here. deck/README.md («El contrato de las celdas») describes each message.
//
// Sets of names are frozen objects keyed by the upper-case name, in the
// contract's order: OUTPUT.STREAM === "stream", MIRROR_TO_DECK.RUN_SLIDE === "runSlide".

// Named imports: esbuild then leaves out what the page does not use (the file's own comment).
import {
  bootStages,
  cellStatuses,
  events,
  follow,
  limits,
  mirror,
  notice,
  outputArea,
  outputs,
  requests,
  runStatuses,
  streams,
  work,
} from "../../../py/dpdeck/classroom/protocol.json";

function names(values) {
  const constant = (value) => value.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
  return Object.freeze(Object.fromEntries(values.map((value) => [constant(value), value])));
}

// Stream text a run may print; past it the rest is dropped with a notice.
export const MAX_OUTPUT_CHARS = limits.maxOutputChars;
// Figures a run may show; the rest are closed with a notice.
export const MAX_FIGURES = limits.maxFigures;
// The worker posts "stream" events at most this often on average, after a burst.
export const STREAM_EVENTS_PER_SECOND = limits.streamEventsPerSecond;
export const STREAM_EVENT_BURST = limits.streamEventBurst;

export const REQUEST = names(requests);
export const EVENT = names(events);
/** The worker's boot stages, in the order they run. */
export const BOOT_STAGE = names(bootStages);
// How a run ended, as run_cell says it. The page adds "cancelled" for a run
// dropped from its queue before it started; that one never reaches the worker.
export const RUN_STATUS = names(runStatuses);
export const STREAM = names(streams);
export const OUTPUT = names(Object.keys(outputs));
export const ORIGIN = names(outputArea.origins);
/** A cell's data-status. */
export const CELL_STATUS = names(cellStatuses);

// The deck and its speaker view's previews (?receiver): window.postMessage, {channel, type, ...}.
export const MIRROR_CHANNEL = mirror.channel;
/** What the deck tells the previews about its cells. */
export const MIRROR_TO_SPEAKER = names(mirror.toSpeaker);
/** What a preview asks of the deck's one Python. */
export const MIRROR_TO_DECK = names(mirror.toDeck);

/** Following the lecturer on `build.py serve`: routes, header names, the event and the bounds. */
export const FOLLOW = Object.freeze({ ...follow });

/** A student's exported work: {format, version, maxBytes}. */
export const WORK = Object.freeze({ ...work });

export const OUTPUT_TAG = Object.freeze(
  Object.fromEntries(Object.entries(outputs).map(([kind, markup]) => [kind, markup.tag])),
);
export const NOTICE_TAG = notice.tag;
export const NOTICE_CLASS = notice.class;
export const OUTPUT_AREA_TAG = outputArea.tag;
export const OUTPUT_AREA_CLASS = outputArea.class;

/** HTML classes of an output: outputClass("stream", "stderr") → "out-stream out-stderr" (any other stream shows as stdout). */
export function outputClass(kind, stream = "") {
  const shown = stream === STREAM.STDERR ? STREAM.STDERR : STREAM.STDOUT;
  return outputs[kind].class.replace("{stream}", shown);
}

/** Alternative text of a cell's figure `number` (from 1): what it shows, its output's `description`. */
export function figureAlt(number, description) {
  return outputs[OUTPUT.FIGURE].alt.replace("{number}", String(number)).replace("{description}", description);
}

/** What an error output shows: its traceback, or "name: message" when it has none. */
export function errorText(output) {
  return output.traceback || `${output.ename}: ${output.evalue}`;
}
