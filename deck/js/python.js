// The page's side of the Python worker: boots it, queues cell runs one at a
// time, streams their output back and stops them. It owns Python's state and
// says when it changes (RUNTIME_EVENT); it never touches the page (the
// deck's plugin shows the state).
//
// Stopping: with cross-origin isolation (COOP/COEP headers) a SharedArrayBuffer
// lets the page raise KeyboardInterrupt inside the running cell. Without it, or
// if the cell does not react in time (code stuck inside C), the worker is
// terminated and a fresh one boots on its own.

import { takeEarlyWorker } from "./earlyworker.js";
import { EVENT, REQUEST, RUN_STATUS } from "./protocol.js";

/** Python's state in the page, also shown as <html data-python>. */
export const PYTHON_STATE = Object.freeze({ OFF: "off", LOADING: "loading", READY: "ready", ERROR: "error" });
/** A run dropped from the queue before it started (it never reached the worker). */
export const RUN_CANCELLED = "cancelled";
/** The failure step when the worker itself could not start (before any boot stage). */
export const WORKER_STEP = "worker";
/** What a PythonRuntime dispatches: "state" {state, failure} and "progress" (the worker's progress payload). */
export const RUNTIME_EVENT = Object.freeze({ STATE: "state", PROGRESS: "progress" });

const SIGINT = 2;

const STOP_BY_RESTART_MESSAGE =
  "Ejecución detenida: este servidor no permite interrumpir Python, así que se " +
  "reinició (tus ediciones se conservan).";
const STOP_STUCK_MESSAGE =
  "Ejecución detenida: la celda no respondía a la interrupción y Python se reinició " +
  "(tus ediciones se conservan).";
const RESTART_MESSAGE = "Ejecución detenida porque Python se reinició.";
const CRASH_MESSAGE = "Python se cerró de forma inesperada durante esta celda y se está reiniciando.";

export class PythonRuntime extends EventTarget {
  /**
   * interruptGraceMs: after Stop, how long a cell may take to notice the
   * interrupt before the worker is terminated instead; bootStallMs: a boot
   * that shows no progress for this long has failed (config.js).
   */
  constructor({ workerUrl, baseUrl, interruptGraceMs, bootStallMs }) {
    super();
    this.workerUrl = workerUrl;
    this.baseUrl = baseUrl;
    this.interruptGraceMs = interruptGraceMs;
    this.bootStallMs = bootStallMs;
    this.worker = null;
    this.state = PYTHON_STATE.OFF;
    this.progress = { loaded: 0, total: 0, step: "" };
    this.failure = null;
    this.nextId = 1;
    this.pending = new Map(); // request id → {resolve, reject}
    this.queue = []; // runs waiting for Python
    this.current = null; // the run in progress
    this.canInterrupt = Boolean(window.crossOriginIsolated && typeof SharedArrayBuffer === "function");
    this.interruptBuffer = null;
    this.timings = null;
    this.generation = 0;
    // Counters a person (or a test) can read: Reveal.getPlugin("dpdeck").python.stats.
    this.stats = { boots: 0, streamMessages: 0, restarts: 0, interruptFallbacks: 0 };
  }

  // ------------------------------------------------------------ lifecycle

  start() {
    if (this.worker) return;
    this.generation += 1;
    const generation = this.generation;
    this.stats.boots += 1;
    this.failure = null;
    this.progress = { loaded: 0, total: 0, step: "" };
    this.setState(PYTHON_STATE.LOADING);
    let worker;
    try {
      // The first boot takes the worker the page's first script started (already booting).
      worker = takeEarlyWorker() || new Worker(this.workerUrl);
    } catch (error) {
      this.fail({ step: WORKER_STEP, message: error.message || String(error) });
      return;
    }
    this.worker = worker;
    worker.onmessage = (event) => this.onMessage(event.data, generation);
    worker.onerror = (event) => {
      event.preventDefault?.();
      if (generation !== this.generation) return;
      // While booting this is a failed boot; once ready, Python crashed: start again.
      if (this.state === PYTHON_STATE.READY) this.restart(CRASH_MESSAGE);
      else this.fail({ step: this.progress.step || WORKER_STEP, message: event.message || "el worker falló" });
    };
    this.interruptBuffer = this.canInterrupt ? new Int32Array(new SharedArrayBuffer(4)) : null;
    const started = performance.now();
    this.lastActivityAt = started;
    clearInterval(this.stallTimer);
    this.stallTimer = setInterval(() => {
      if (generation !== this.generation || this.state !== PYTHON_STATE.LOADING) {
        clearInterval(this.stallTimer);
        return;
      }
      if (performance.now() - this.lastActivityAt > this.bootStallMs) {
        this.fail({ step: this.progress.step, message: `sin avances en ${this.bootStallMs / 1000} s.` });
      }
    }, 1000);
    this.request(REQUEST.BOOT, { base: this.baseUrl, interruptBuffer: this.interruptBuffer }).then(
      (result) => {
        if (generation !== this.generation) return;
        // pageMs: boot as the page saw it; readyAtMs: since the page started loading.
        this.timings = {
          ...result.timings,
          pageMs: Math.round(performance.now() - started),
          readyAtMs: Math.round(performance.now()),
        };
        this.setState(PYTHON_STATE.READY);
        this.pump();
      },
      (error) => {
        if (generation !== this.generation) return;
        this.fail(error);
      },
    );
  }

  /** Terminates the worker (whatever it is doing) and boots a new one. */
  restart(reason = RESTART_MESSAGE) {
    this.stats.restarts += 1;
    this.terminate(reason);
    this.start();
  }

  terminate(reason) {
    if (this.worker) {
      this.worker.terminate();
      this.worker = null;
    }
    this.generation += 1;
    this.rejectPending();
    if (this.current) {
      const run = this.current;
      this.current = null;
      run.finish({ status: RUN_STATUS.STOPPED, outputs: [], notice: reason, restarted: true });
    }
    this.setState(PYTHON_STATE.OFF);
  }

  fail(error) {
    const message = (error && error.message) || String(error);
    const step = (error && error.step) || this.progress.step || "";
    this.failure = { step, message };
    if (this.worker) {
      this.worker.terminate();
      this.worker = null;
    }
    this.generation += 1;
    this.rejectPending();
    const notice = `Python no pudo cargarse: ${message}`;
    const waiting = [this.current, ...this.queue].filter(Boolean);
    this.current = null;
    this.queue = [];
    for (const run of waiting) run.finish({ status: RUN_STATUS.ERROR, outputs: [], notice });
    this.setState(PYTHON_STATE.ERROR);
  }

  rejectPending() {
    for (const { reject } of this.pending.values()) reject(new Error("worker terminado"));
    this.pending.clear();
  }

  setState(state) {
    this.state = state;
    this.dispatchEvent(new CustomEvent(RUNTIME_EVENT.STATE, { detail: { state, failure: this.failure } }));
  }

  // ------------------------------------------------------------ messaging

  request(type, payload, transfer = []) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, type, payload }, transfer);
    });
  }

  onMessage(message, generation) {
    if (generation !== this.generation || !message) return;
    if (message.id !== undefined) {
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.ok) waiter.resolve(message.result);
      else waiter.reject(message.error);
      return;
    }
    if (message.type === EVENT.PROGRESS) {
      this.progress = message.payload;
      this.lastActivityAt = performance.now();
      this.dispatchEvent(new CustomEvent(RUNTIME_EVENT.PROGRESS, { detail: message.payload }));
    } else if (message.type === EVENT.STREAM) {
      this.stats.streamMessages += 1;
      const run = this.current;
      if (run && run.runId === message.payload.runId) run.onStream(message.payload.chunks);
    }
  }

  // ------------------------------------------------------------ runs

  /**
   * Queues a cell run. Resolves with the run's result
   * ({status, outputs, elapsedMs?, notice?, restarted?}); never rejects.
   */
  run(cellId, source, { onStart = () => {}, onStream = () => {} } = {}) {
    this.cancel(cellId); // one pending run per cell: the newest code wins
    return new Promise((resolve) => {
      const run = {
        runId: `${cellId}:${this.nextId++}`,
        cellId,
        source,
        onStart,
        onStream,
        finish: (result) => {
          if (run.done) return;
          run.done = true;
          resolve(result);
        },
      };
      this.queue.push(run);
      // Not booted yet, or the last boot failed: running a cell (re)tries.
      if (!this.worker) this.start();
      this.pump();
    });
  }

  isQueued(cellId) {
    return this.queue.some((run) => run.cellId === cellId);
  }

  isRunning(cellId) {
    return Boolean(this.current && this.current.cellId === cellId);
  }

  /** Drops a queued (not yet running) run of this cell. */
  cancel(cellId) {
    const kept = [];
    for (const run of this.queue) {
      if (run.cellId === cellId) run.finish({ status: RUN_CANCELLED, outputs: [] });
      else kept.push(run);
    }
    this.queue = kept;
  }

  /** Stops this cell: drops it from the queue, or interrupts it if it is running. */
  stop(cellId) {
    if (!this.isRunning(cellId)) {
      this.cancel(cellId);
      return;
    }
    const run = this.current;
    if (this.interruptBuffer) {
      // Python takes the signal from the buffer between bytecodes (atomically:
      // see worker.js). Code stuck inside a C call, or a cell that catches
      // KeyboardInterrupt and goes on, never ends: after the grace period
      // Python is restarted instead.
      Atomics.store(this.interruptBuffer, 0, SIGINT);
      setTimeout(() => {
        if (this.current !== run) return;
        this.stats.interruptFallbacks += 1;
        console.warn(`dpdeck: la celda ${run.cellId} no atendió la interrupción; se reinicia Python`);
        this.restart(STOP_STUCK_MESSAGE);
      }, this.interruptGraceMs);
    } else {
      this.restart(STOP_BY_RESTART_MESSAGE);
    }
  }

  pump() {
    if (this.state !== PYTHON_STATE.READY || this.current || !this.queue.length) return;
    const run = this.queue.shift();
    this.current = run;
    // No Python runs between two cells, so this is the moment to forget a Stop
    // that came too late for the previous one; a Stop pressed from now on,
    // even before the worker starts the cell, stops this run.
    if (this.interruptBuffer) Atomics.store(this.interruptBuffer, 0, 0);
    run.onStart();
    const generation = this.generation;
    this.request(REQUEST.RUN, { runId: run.runId, cellId: run.cellId, source: run.source }).then(
      (result) => {
        if (generation !== this.generation || this.current !== run) return;
        this.current = null;
        run.finish(result);
        this.pump();
      },
      (error) => {
        if (generation !== this.generation || this.current !== run) return;
        this.current = null;
        if (error && error.fatal) {
          run.finish({ status: RUN_STATUS.ERROR, outputs: [], notice: CRASH_MESSAGE });
          this.restart(CRASH_MESSAGE);
          return;
        }
        run.finish({
          status: RUN_STATUS.ERROR,
          outputs: [],
          notice: `Error interno al ejecutar la celda: ${(error && error.message) || error}`,
        });
        this.pump();
      },
    );
  }
}
