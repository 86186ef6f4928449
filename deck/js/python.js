// The page's side of the Python worker: boots it, queues cell runs one at a
// time, streams their output back and stops them.
//
// Stopping: with cross-origin isolation (COOP/COEP headers) a SharedArrayBuffer
// lets the page raise KeyboardInterrupt inside the running cell. Without it, or
// if the cell does not react in time (code stuck inside C), the worker is
// terminated and a fresh one boots on its own.

import { takeEarlyWorker } from "./earlyworker.js";

const SIGINT = 2;
// After an interrupt request, how long the cell may take to notice it before
// the worker is terminated instead (the goal: idle within 2 s of Stop).
const INTERRUPT_GRACE_MS = 1500;
// A boot that shows no progress for this long is reported as failed.
const STALL_MS = 90_000;

export const STOP_BY_RESTART_MESSAGE =
  "Ejecución detenida: este servidor no permite interrumpir Python, así que se " +
  "reinició (tus ediciones se conservan).";
export const STOP_STUCK_MESSAGE =
  "Ejecución detenida: la celda no respondía a la interrupción y Python se reinició " +
  "(tus ediciones se conservan).";
export const RESTART_MESSAGE = "Ejecución detenida porque Python se reinició.";
export const CRASH_MESSAGE =
  "Python se cerró de forma inesperada durante esta celda y se está reiniciando.";

export class PythonRuntime extends EventTarget {
  constructor({ workerUrl, baseUrl }) {
    super();
    this.workerUrl = workerUrl;
    this.baseUrl = baseUrl;
    this.worker = null;
    this.state = "off"; // off | loading | ready | error
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
    // Counters a person (or a test) can read from the console: window.dpdeck.runtime.stats.
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
    this.setState("loading");
    let worker;
    try {
      worker = takeEarlyWorker() || new Worker(this.workerUrl);
    } catch (error) {
      this.fail({ step: "worker", message: error.message || String(error) });
      return;
    }
    this.worker = worker;
    worker.onmessage = (event) => this.onMessage(event.data, generation);
    worker.onerror = (event) => {
      event.preventDefault?.();
      if (generation !== this.generation) return;
      // While booting this is a failed boot; once ready, Python crashed: start again.
      if (this.state === "ready") this.restart(CRASH_MESSAGE);
      else this.fail({ step: this.progress.step || "worker", message: event.message || "el worker falló" });
    };
    this.interruptBuffer = this.canInterrupt ? new Int32Array(new SharedArrayBuffer(4)) : null;
    const started = performance.now();
    this.lastActivityAt = started;
    clearInterval(this.stallTimer);
    this.stallTimer = setInterval(() => {
      if (generation !== this.generation || this.state !== "loading") {
        clearInterval(this.stallTimer);
        return;
      }
      if (performance.now() - this.lastActivityAt > STALL_MS) {
        this.fail({ step: this.progress.step, message: `sin avances en ${STALL_MS / 1000} s.` });
      }
    }, 1000);
    this.request("boot", { base: this.baseUrl, interruptBuffer: this.interruptBuffer }).then(
      (result) => {
        if (generation !== this.generation) return;
        // pageMs: boot as the page saw it; readyAtMs: since the page started loading.
        this.timings = {
          ...result.timings,
          pageMs: Math.round(performance.now() - started),
          readyAtMs: Math.round(performance.now()),
        };
        this.setState("ready");
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
      run.finish({ status: "stopped", outputs: [], notice: reason, restarted: true });
    }
    this.setState("off");
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
    for (const run of waiting) run.finish({ status: "error", outputs: [], notice });
    this.setState("error");
  }

  rejectPending() {
    for (const { reject } of this.pending.values()) reject(new Error("worker terminado"));
    this.pending.clear();
  }

  setState(state) {
    this.state = state;
    document.documentElement.dataset.python = state;
    this.dispatchEvent(new CustomEvent("state", { detail: { state, failure: this.failure } }));
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
    if (message.type === "progress") {
      this.progress = message.payload;
      this.lastActivityAt = performance.now();
      this.dispatchEvent(new CustomEvent("progress", { detail: message.payload }));
    } else if (message.type === "stream") {
      this.stats.streamMessages += 1;
      const run = this.current;
      if (run && run.runId === message.payload.runId) run.onStream(message.payload.chunks);
    }
  }

  // ------------------------------------------------------------ runs

  /**
   * Queues a cell run. Resolves with the run's result
   * ({status, outputs, elapsedMs, notice?}); never rejects.
   */
  run(cellId, source, { onStart = () => {}, onStream = () => {}, maxOutputChars, maxFigures } = {}) {
    this.cancel(cellId); // one pending run per cell: the newest code wins
    return new Promise((resolve) => {
      const run = {
        runId: `${cellId}:${this.nextId++}`,
        cellId,
        source,
        maxOutputChars,
        maxFigures,
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
      if (run.cellId === cellId) run.finish({ status: "cancelled", outputs: [] });
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
      }, INTERRUPT_GRACE_MS);
    } else {
      this.restart(STOP_BY_RESTART_MESSAGE);
    }
  }

  pump() {
    if (this.state !== "ready" || this.current || !this.queue.length) return;
    const run = this.queue.shift();
    this.current = run;
    // No Python runs between two cells, so this is the moment to forget a Stop
    // that came too late for the previous one; a Stop pressed from now on,
    // even before the worker starts the cell, stops this run.
    if (this.interruptBuffer) Atomics.store(this.interruptBuffer, 0, 0);
    run.onStart();
    const generation = this.generation;
    this.request("run", {
      runId: run.runId,
      cellId: run.cellId,
      source: run.source,
      maxOutputChars: run.maxOutputChars,
      maxFigures: run.maxFigures,
    }).then(
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
          run.finish({ status: "error", outputs: [], notice: CRASH_MESSAGE });
          this.restart(CRASH_MESSAGE);
          return;
        }
        run.finish({
          status: "error",
          outputs: [],
          notice: `Error interno al ejecutar la celda: ${(error && error.message) || error}`,
        });
        this.pump();
      },
    );
  }
}
