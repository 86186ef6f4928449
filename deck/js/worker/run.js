// Running a cell: dpdeck.cellrun.run_cell (or an exercise's check) called
// with the cell's source, what it prints streamed to the page as it comes,
// its figures moved rather than copied, and what no error of the cell can
// show (a refused request it left behind, a connection the page's policy
// blocked) said after its outputs.

import {
  EVENT,
  MAX_FIGURES,
  MAX_OUTPUT_CHARS,
  OUTPUT,
  RUN_STATUS,
  STREAM_EVENT_BURST,
  STREAM_EVENTS_PER_SECOND,
} from "../shared/protocol.js";
import { natives } from "./cellscope.js";
import { describeLateRefusals, describeViolations, takeRefusals, takeViolations } from "./netguard.js";
import { cellScope, emit, state } from "./state.js";

// A violation event is a task of its own: this long after a failure, the
// ones it caused have been recorded.
const VIOLATION_WAIT_MS = 20;
// Turns of the event loop a run waits after its cell, for what the cell left
// to run right after it (see tellBlockedConnections).
const CALLBACK_TURNS = 3;

// Collects stdout/stderr chunks and posts them as they come, but at most
// STREAM_EVENTS_PER_SECOND messages a second on average (a token bucket allowing a
// short burst): a cell printing in a tight loop cannot flood the page, and a
// few prints followed by a long computation still show at once. The worker
// cannot use timers while Python runs, so pending text goes out with the next
// write, when the cell hits its output cap, or when it ends.
class StreamBatcher {
  constructor(runId, maxChars) {
    this.runId = runId;
    this.maxChars = maxChars;
    this.pending = [];
    this.tokens = STREAM_EVENT_BURST;
    this.refilledAt = performance.now();
    this.totalChars = 0;
  }

  add(name, text) {
    const last = this.pending[this.pending.length - 1];
    if (last && last.name === name) last.text += text;
    else this.pending.push({ name, text });
    this.totalChars += text.length;
    const now = performance.now();
    this.tokens = Math.min(
      STREAM_EVENT_BURST,
      this.tokens + ((now - this.refilledAt) / 1000) * STREAM_EVENTS_PER_SECOND,
    );
    this.refilledAt = now;
    // Past the cap Python sends nothing more: send the rest (and its notice) now.
    if (this.tokens >= 1 || this.totalChars > this.maxChars) {
      this.tokens -= 1;
      this.flush();
    }
  }

  flush() {
    if (!this.pending.length) return;
    emit(EVENT.STREAM, { runId: this.runId, chunks: this.pending });
    this.pending = [];
  }
}

// The figures' PNG bytes move to the page instead of being copied.
function figureBuffers(outputs) {
  const buffers = new Set();
  for (const output of outputs) {
    if (output.type === OUTPUT.FIGURE && output.data instanceof Uint8Array) buffers.add(output.data.buffer);
  }
  return [...buffers];
}

// Runs a cell through `runCell` (dpdeck.cellrun.run_cell, or dpdeck.exercises.run_check
// for «Comprobar»), streaming what it prints; `extra` are further keyword arguments.
async function runThrough(runCell, { runId, cellId, source }, extra = {}) {
  if (!runCell) throw new Error("Python todavía no está listo.");
  const batcher = new StreamBatcher(runId, MAX_OUTPUT_CHARS);
  const onOutput = (output) => {
    batcher.add(output.get("name"), output.get("text"));
  };
  const started = performance.now();
  let proxy;
  let refused = [];
  cellScope.begin();
  try {
    proxy = runCell.callKwargs(source, {
      ...extra,
      cell_id: cellId || "celda",
      on_output: onOutput,
      max_output_chars: MAX_OUTPUT_CHARS,
      max_figures: MAX_FIGURES,
    });
  } catch (error) {
    // A Stop that lands before run_cell has started the cell's own code.
    if (/KeyboardInterrupt/.test(String(error && error.message))) {
      return { result: { status: RUN_STATUS.STOPPED, outputs: [], notice: "Ejecución detenida." } };
    }
    throw error;
  } finally {
    batcher.flush();
    cellScope.end();
    // Refusals so far were raised inside the cell: its own output shows them.
    refused = takeRefusals();
  }
  const result = toPlain(proxy);
  restoreLostRefusal(result, refused);
  result.elapsedMs = Math.round(performance.now() - started);
  await tellBlockedConnections(result);
  return { result, transfer: figureBuffers(result.outputs) };
}

// Chromium now and then loses the JavaScript error that a guard throws through
// a call into JavaScript (most often a \`new\`, as in \`js.WebSocket.new(url)\`):
// Python then reads «SystemError: error return without exception set», which
// says nothing to a student. The guard knows what it refused during the cell,
// and the refusal is what stopped it (the cell's last one): that is said instead.
const LOST_JS_ERROR = "error return without exception set";

function restoreLostRefusal(result, refused) {
  if (!refused.length) return;
  const lost = result.outputs.find(
    (output) => output.type === OUTPUT.ERROR && output.ename === "SystemError" && output.evalue === LOST_JS_ERROR,
  );
  if (!lost) return;
  const message = `TypeError: ${refused[refused.length - 1]}`;
  lost.ename = "JsException";
  lost.evalue = message;
  lost.traceback = lost.traceback.replace(`SystemError: ${LOST_JS_ERROR}`, `pyodide.ffi.JsException: ${message}`);
}

function toPlain(proxy) {
  const value = proxy.toJs({ dict_converter: Object.fromEntries, create_pyproxies: false });
  proxy.destroy();
  return value;
}

export async function run(payload) {
  return runThrough(state.runCell, payload);
}

// «Comprobar»: the exercise's cell runs, then its check looks at what it defined.
export async function check(payload) {
  if (!state.pyodide) throw new Error("Python todavía no está listo.");
  state.runCheck ??= state.pyodide.pyimport("dpdeck.exercises").run_check;
  return runThrough(state.runCheck, payload, { check: payload.check });
}

// The lab of the class with the challenge's answer: {verdict, json, filename}.
export async function lab({ seed, extension }) {
  if (!state.pyodide) throw new Error("Python todavía no está listo.");
  state.exportLab ??= state.pyodide.pyimport("dpdeck.exercises").export_lab;
  const extensionProxy = state.pyodide.toPy(extension || {});
  try {
    return { result: toPlain(state.exportLab.callKwargs({ seed, extension: extensionProxy })) };
  } finally {
    extensionProxy.destroy();
  }
}

// Attempts that no error of the cell can show, said after its outputs instead
// of nothing: a refusal in a promise the cell left (it runs right after the
// cell), and a connection the page's policy blocked (a channel netguard.js
// does not know).
async function tellBlockedConnections(result) {
  // The cell's promises (Pyodide runs a Python callback of `then` a turn or
  // two of the event loop later: about 2 ms), and the events of its blocked
  // attempts, run first.
  for (let turn = 0; turn < CALLBACK_TURNS; turn += 1) await new Promise((done) => natives.setTimeout(done, 0));
  let recorded = takeViolations();
  if (recorded.length) {
    await afterViolations();
    recorded = recorded.concat(takeViolations());
  }
  const sentences = [result.notice, describeLateRefusals(takeRefusals()), describeViolations(recorded)];
  const notice = sentences.filter(Boolean).join(" ");
  if (notice) result.notice = notice;
}

export function afterViolations() {
  return new Promise((done) => natives.setTimeout(done, VIOLATION_WAIT_MS));
}
