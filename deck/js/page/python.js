// The page's side of the Python worker: boots it, queues cell runs one at a
// time, streams their output back and stops them. It owns Python's state and
// says when it changes (RUNTIME_EVENT); it never touches the page (the
// deck's plugin shows the state).
//
// Stopping: where the browser gives an isolated page (https or localhost, with
// the COOP/COEP headers) a SharedArrayBuffer, the page raises
// KeyboardInterrupt inside the running cell. Without one, or if the cell does
// not react in time (code stuck inside C), the worker is terminated and a
// fresh one boots on its own; the cell says which of the three was missing.
//
// Nothing a cell does can leave a run pending for ever: a run that fails
// inside the worker (Pyodide's fatal errors included) restarts Python, and a
// worker that ends by itself (out of memory…) is noticed at once through a
// Web Lock it holds while alive. Each says so in Spanish on the cell that was
// running, or in a short message when none was. A Python restored from the
// build's snapshot that breaks that way (or cannot draw its warm-up figure)
// is not restored again: the next one starts from scratch, and its worker
// has the device remember that the snapshot does not fit this browser.

import { takeEarlyWorker } from "./earlyworker.js";
import { EVENT, REQUEST, RUN_STATUS } from "../shared/protocol.js";
import { UNFIT, composeWorkerName } from "../shared/workerboot.js";
import { startPolicedWorker } from "./workerstart.js";

/** Python's state in the page, also shown as <html data-python>. */
export const PYTHON_STATE = Object.freeze({ OFF: "off", LOADING: "loading", READY: "ready", ERROR: "error" });
/** A run dropped from the queue before it started (it never reached the worker). */
export const RUN_CANCELLED = "cancelled";
/** The failure step when the worker itself could not start (before any boot stage). */
export const WORKER_STEP = "worker";
/**
 * What a PythonRuntime dispatches: "state" {state, failure}, "progress" (the
 * worker's progress payload), "crash" {message} (Python broke or ended
 * while no cell was running, and is being restarted), "notice" {message}
 * (something a person should read once about how Python started), "busy" (a
 * run was queued) and "idle" (Python is ready and its queue has just emptied:
 * no cell runs or waits).
 */
export const RUNTIME_EVENT = Object.freeze({
  STATE: "state",
  PROGRESS: "progress",
  CRASH: "crash",
  NOTICE: "notice",
  BUSY: "busy",
  IDLE: "idle",
});

const SIGINT = 2;

// Why Stop restarts Python instead of interrupting it, by what is missing (whyStopRestarts).
const STOP_BY_RESTART_MESSAGE = Object.freeze({
  insecure:
    "Ejecución detenida: el navegador solo deja interrumpir Python en páginas servidas por https " +
    "(o desde este mismo ordenador), así que se reinició (tus ediciones se conservan).",
  server:
    "Ejecución detenida: este servidor no envía las cabeceras COOP y COEP que dejan interrumpir Python, " +
    "así que se reinició (tus ediciones se conservan).",
  browser:
    "Ejecución detenida: este navegador no deja interrumpir Python (no ofrece SharedArrayBuffer), " +
    "así que se reinició (tus ediciones se conservan).",
});
const STOP_STUCK_MESSAGE =
  "Ejecución detenida: la celda no respondía a la interrupción y Python se reinició " +
  "(tus ediciones se conservan).";
const RESTART_MESSAGE = "Ejecución detenida porque Python se reinició.";
const KEPT = "tus ediciones se conservan";
const GONE_MESSAGE =
  `El proceso de Python terminó sin avisar (por ejemplo, por falta de memoria) y se está reiniciando; ${KEPT}.`;
const UNCAUGHT_MESSAGE = (message) =>
  `Python tuvo un error interno que no se pudo atender (${message}) y se está reiniciando; ${KEPT}.`;
const FATAL_MESSAGE = (message) =>
  `Python sufrió un error interno irrecuperable (${message}) y se está reiniciando; ${KEPT}.`;
const INTERNAL_MESSAGE = (message) =>
  `Error interno al ejecutar la celda (${message}); Python se está reiniciando por si quedó dañado; ${KEPT}.`;
// Whatever broke it (a cell's own crash or a memory that does not fit this browser), a restored
// Python that breaks is not trusted again on this device: the message says both.
const RESTORE_BROKE_MESSAGE = (message) =>
  `Python falló tras arrancar de su memoria preparada con un error interno irrecuperable (${message}); ` +
  `por si esa memoria no encaja con este navegador, se está reiniciando desde cero, como lo hará en este dispositivo; ${KEPT}.`;
const UNFIT_FOUND_MESSAGE =
  "Python arrancó desde cero porque su memoria preparada no encaja con este navegador " +
  "(tarda algo más; este dispositivo lo recordará).";
/** Said once when the boot found a copy of Python on this device that was not this build's (and did not use it). */
export const COPY_REFUSED_MESSAGE =
  "La copia de Python guardada en este dispositivo no era la de esta versión de las diapositivas: " +
  "se descartó y Python se cargó de los archivos del mazo.";
const POLICY_FALLBACK_WARNING =
  "dpdeck: este navegador aplica la política de seguridad de la página de otra forma dentro del worker; " +
  "Python arranca sin ella (solo con los controles del propio worker).";

/**
 * Why Stop must restart Python on a page of `scope` (a window) instead of
 * interrupting it: "insecure" (not https nor this computer: no isolation at
 * all), "server" (no COOP/COEP headers), "browser" (isolated, but the browser
 * offers no SharedArrayBuffer); null when it can interrupt.
 */
export function whyStopRestarts(scope) {
  if (scope.crossOriginIsolated && typeof scope.SharedArrayBuffer === "function") return null;
  if (!scope.isSecureContext) return "insecure";
  return scope.crossOriginIsolated ? "browser" : "server";
}

export class PythonRuntime extends EventTarget {
  /**
   * interruptGraceMs: after Stop, how long a cell may take to notice the
   * interrupt before the worker is terminated instead; bootStallMs: a boot
   * that shows no progress for this long has failed; keepQuietMs: how long
   * Python is quiet before the worker keeps its snapshot and packages on the device;
   * warmQuietMs: before a restored Python draws its throwaway figure
   * (config.js).
   */
  constructor({ workerUrl, baseUrl, interruptGraceMs, bootStallMs, keepQuietMs, warmQuietMs }) {
    super();
    this.keepQuietMs = keepQuietMs;
    this.warmQuietMs = warmQuietMs;
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
    this.stopRestarts = whyStopRestarts(window);
    this.canInterrupt = this.stopRestarts === null;
    this.interruptBuffer = null;
    this.timings = null;
    this.generation = 0;
    // Whether the Python now running was restored from the build's snapshot,
    // and, once one such broke, what broke (every later worker is told: boot
    // from scratch).
    this.restored = false;
    this.unfit = null;
    // Started from its own URL instead of a blob: URL (see workerstart.js): only
    // after a browser's policy blocked the deck's own files in the worker.
    this.plainWorker = false;
    // Counters a person (or a test) can read: Reveal.getPlugin("dpdeck").python.stats.
    // snapshotKept: whether the worker kept Python's snapshot and packages on this device (null: not asked).
    // figureWarmed: whether a restored Python drew its throwaway figure once quiet (null: not asked).
    this.stats = {
      boots: 0,
      streamMessages: 0,
      restarts: 0,
      interruptFallbacks: 0,
      snapshotKept: null,
      figureWarmed: null,
      copiesRefused: 0,
    };
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
      // The first boot takes the worker the page's first script started (already
      // booting, under the page's policy: earlyworker.js).
      worker =
        (!this.unfit && takeEarlyWorker()) ||
        startPolicedWorker(this.workerUrl, { plain: this.plainWorker, name: composeWorkerName({ unfit: this.unfit }) });
    } catch (error) {
      this.fail({ step: WORKER_STEP, message: error.message || String(error) });
      return;
    }
    this.worker = worker;
    // The protocol runs over a port of this channel that only the worker's own
    // code holds (it comes with the "boot" request): what a cell posts to the
    // page, or an earlier cell's listener answers, never reaches it. Until the
    // worker has the port, its boot progress comes the usual way; from its
    // first message on the port, nothing else is heard.
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.workerPort = channel.port2;
    channel.port1.onmessage = (event) => {
      worker.onmessage = null;
      this.onMessage(event.data, generation);
    };
    worker.onmessage = (event) => this.onMessage(event.data, generation);
    worker.onerror = (event) => {
      event.preventDefault?.();
      if (generation !== this.generation) return;
      // While booting this is a failed boot; once ready, an error the worker
      // could not handle (it handles the ones a cell's callbacks raise): start again.
      const message = event.message || "sin mensaje";
      if (this.state === PYTHON_STATE.READY) this.crash(UNCAUGHT_MESSAGE(message), message);
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
    const lifeLock = navigator.locks ? `dpdeck-python-${generation}-${Math.random().toString(36).slice(2)}` : null;
    this.request(REQUEST.BOOT, { base: this.baseUrl, interruptBuffer: this.interruptBuffer, lifeLock }).then(
      (result) => {
        if (generation !== this.generation) return;
        this.watchLife(lifeLock, generation);
        // pageMs: boot as the page saw it; readyAtMs: since the page started loading.
        this.timings = {
          ...result.timings,
          pageMs: Math.round(performance.now() - started),
          readyAtMs: Math.round(performance.now()),
        };
        const { snapshot, packagesCopy, warmupFigure } = result.timings;
        this.restored = Boolean(snapshot && snapshot.used);
        this.setState(PYTHON_STATE.READY);
        this.pump();
        const copyRefused = Boolean((snapshot && snapshot.refused) || (packagesCopy && packagesCopy.refused));
        if (copyRefused) this.stats.copiesRefused += 1;
        // One notice at most: a snapshot that does not fit this browser, else one that could not be
        // used (the worker's one line), else a copy on the device that was refused.
        const notice =
          snapshot && snapshot.unfit === UNFIT.FOUND
            ? UNFIT_FOUND_MESSAGE
            : result.timings.notice || (copyRefused ? COPY_REFUSED_MESSAGE : null);
        if (notice) this.dispatchEvent(new CustomEvent(RUNTIME_EVENT.NOTICE, { detail: { message: notice } }));
        if (warmupFigure === false) this.warmWhenQuiet(generation);
        if ((snapshot && snapshot.keep) || (packagesCopy && packagesCopy.keep)) this.keepCopiesWhenQuiet(generation);
      },
      (error) => {
        if (generation !== this.generation) return;
        if (error && error.policyBlocked && !this.plainWorker) {
          console.warn(POLICY_FALLBACK_WARNING);
          this.plainWorker = true;
          this.terminate(RESTART_MESSAGE);
          this.start();
          return;
        }
        this.fail(error);
      },
    );
  }

  /**
   * The worker holds the Web Lock `name` while it lives; the browser releases
   * it when the worker ends, however that happens. Once the page gets the lock,
   * the worker is gone: unless the page ended it itself (a newer generation),
   * Python is restarted.
   */
  watchLife(name, generation) {
    if (!name || !navigator.locks) return;
    navigator.locks
      .request(name, () => {
        if (generation === this.generation && this.worker) this.crash(GONE_MESSAGE);
      })
      .catch(() => {});
  }

  /**
   * Once Python has been quiet for `ms` (ready, no cell running), sends the
   * request `type` to this generation's worker and hands its result to
   * `then`, or its error to `failed` (unless that worker is gone by then):
   * the worker's own chores, out of the way of the cells a person runs.
   */
  requestWhenQuiet(generation, ms, type, then, failed = () => {}) {
    this.afterQuiet(
      ms,
      () => {
        if (generation !== this.generation || !this.worker) return;
        this.request(type, {}).then(then, (error) => {
          if (generation === this.generation) failed(error);
        });
      },
      { readyOnly: true },
    );
  }

  /**
   * Python was restored from its snapshot, whose boot leaves the throwaway
   * figure of the warm-up (warmup.js) to this: once Python has been quiet for
   * warmQuietMs, the worker draws it, and the browser compiles the drawing
   * code before the first figure a person asks for. A figure it cannot draw
   * says the restored Python is broken: Python restarts from scratch.
   */
  warmWhenQuiet(generation) {
    this.requestWhenQuiet(
      generation,
      this.warmQuietMs,
      REQUEST.WARM,
      ({ drawn }) => {
        this.stats.figureWarmed = drawn;
      },
      (error) => {
        this.stats.figureWarmed = false;
        const message = (error && error.message) || String(error);
        this.crash(FATAL_MESSAGE(message), message);
      },
    );
  }

  /**
   * Python was restored from a downloaded snapshot, or its packages were
   * downloaded: once it has been quiet for keepQuietMs, the worker keeps them
   * on this device, and the next boot here reads them instead of downloading
   * and inflating them (snapshot.js, packagecopy.js), like keeping Python's
   * files offline.
   */
  keepCopiesWhenQuiet(generation) {
    this.requestWhenQuiet(generation, this.keepQuietMs, REQUEST.KEEP, ({ kept, reason }) => {
      this.stats.snapshotKept = kept;
      if (reason) {
        console.warn(`dpdeck: la memoria o los paquetes de Python no quedaron guardados en este dispositivo (${reason})`);
      }
    });
  }

  /**
   * Python broke or ended: the running cell says why (or the page does), and
   * a new Python boots. `broke`: what broke inside Python (an internal error,
   * not the worker ending); after a restore from the build's snapshot, every
   * later Python starts from scratch (`this.unfit`) and the message says so.
   */
  crash(message, broke = null) {
    if (broke && this.restored) {
      this.unfit = broke;
      message = RESTORE_BROKE_MESSAGE(broke);
    }
    this.restored = false;
    if (!this.current) this.dispatchEvent(new CustomEvent(RUNTIME_EVENT.CRASH, { detail: { message } }));
    this.stats.restarts += 1;
    this.terminate(message, RUN_STATUS.ERROR);
    this.start();
  }

  /** Terminates the worker (whatever it is doing) and boots a new one. */
  restart(reason = RESTART_MESSAGE) {
    this.stats.restarts += 1;
    this.terminate(reason);
    this.start();
  }

  terminate(reason, status = RUN_STATUS.STOPPED) {
    if (this.worker) {
      this.worker.terminate();
      this.worker = null;
      this.closePort();
    }
    this.generation += 1;
    this.rejectPending();
    if (this.current) {
      const run = this.current;
      this.current = null;
      run.finish({ status, outputs: [], notice: reason, restarted: true });
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
      this.closePort();
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
      if (this.workerPort) {
        // The first request, "boot", hands the worker its port.
        const port = this.workerPort;
        this.workerPort = null;
        this.worker.postMessage({ id, type, payload: { ...payload, port } }, [...transfer, port]);
      } else {
        this.port.postMessage({ id, type, payload }, transfer);
      }
    });
  }

  closePort() {
    if (this.port) this.port.close();
    this.port = null;
    this.workerPort = null;
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
   * `type` and `payload` ask for another request in the same queue (REQUEST.CHECK
   * with {check}, REQUEST.LAB with {seed, extension}); it resolves with that result.
   */
  run(cellId, source, { onStart = () => {}, onStream = () => {}, type = REQUEST.RUN, payload = {} } = {}) {
    this.cancel(cellId); // one pending run per cell: the newest code wins
    return new Promise((resolve) => {
      const run = {
        runId: `${cellId}:${this.nextId++}`,
        cellId,
        source,
        // What Python is asked: a cell run, a check («Comprobar») or the lab; `payload` adds its arguments.
        type,
        payload,
        onStart,
        onStream,
        finish: (result) => {
          if (run.done) return;
          run.done = true;
          resolve(result);
        },
      };
      this.queue.push(run);
      this.dispatchEvent(new CustomEvent(RUNTIME_EVENT.BUSY));
      // Not booted yet, or the last boot failed: running a cell (re)tries.
      if (!this.worker) this.start();
      this.pump();
    });
  }

  /** A cell runs or waits for Python (or for Python's boot). */
  get busy() {
    return Boolean(this.current) || this.queue.length > 0;
  }

  /**
   * Calls `then` once, after Python has been quiet for `ms`: not booting, no
   * cell running or waiting, the whole time (a run queued meanwhile, a boot
   * or a restart starts the wait again). With `readyOnly`, Python must also be
   * ready (not off or failed). This is how the page's own work (editors,
   * keeping Python's files offline) keeps out of the way of Python's start and
   * of the cells a person runs. Returns a function that cancels the wait.
   */
  afterQuiet(ms, then, { readyOnly = false } = {}) {
    let timer = null;
    const events = [RUNTIME_EVENT.STATE, RUNTIME_EVENT.BUSY, RUNTIME_EVENT.IDLE];
    const quiet = () =>
      !this.busy && (readyOnly ? this.state === PYTHON_STATE.READY : this.state !== PYTHON_STATE.LOADING);
    const cancel = () => {
      clearTimeout(timer);
      events.forEach((type) => this.removeEventListener(type, wait));
    };
    const wait = () => {
      clearTimeout(timer);
      if (!quiet()) return;
      timer = setTimeout(() => {
        if (!quiet()) return;
        cancel();
        then();
      }, ms);
    };
    events.forEach((type) => this.addEventListener(type, wait));
    wait();
    return cancel;
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
      // see worker/boot.js, takeOnRead). Code stuck inside a C call, or a cell that catches
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
      this.restart(STOP_BY_RESTART_MESSAGE[this.stopRestarts]);
    }
  }

  pump() {
    if (this.state !== PYTHON_STATE.READY || this.current) return;
    if (!this.queue.length) {
      this.dispatchEvent(new CustomEvent(RUNTIME_EVENT.IDLE));
      return;
    }
    const run = this.queue.shift();
    this.current = run;
    // No Python runs between two cells, so this is the moment to forget a Stop
    // that came too late for the previous one; a Stop pressed from now on,
    // even before the worker starts the cell, stops this run.
    if (this.interruptBuffer) Atomics.store(this.interruptBuffer, 0, 0);
    run.onStart();
    const generation = this.generation;
    this.request(run.type, { ...run.payload, runId: run.runId, cellId: run.cellId, source: run.source }).then(
      (result) => {
        if (generation !== this.generation || this.current !== run) return;
        this.current = null;
        run.finish(result);
        this.pump();
      },
      (error) => {
        if (generation !== this.generation || this.current !== run) return;
        // A run that failed inside the worker (not the cell's own error, which
        // is a normal result) may have left Python broken: start a new one.
        const message = (error && error.message) || String(error);
        this.crash(error && error.fatal ? FATAL_MESSAGE(message) : INTERNAL_MESSAGE(message), message);
      },
    );
  }
}
