// Python for the deck: Pyodide inside a dedicated Web Worker, so slides and
// editors stay responsive while Python boots or runs a cell.
//
// It speaks the live cells' contract (protocol.js; every message is described
// in deck/README.md): requests {id, type, payload} from the page, one reply
// {id, ok, result | error} to each, and events {type, payload} without id;
// plain data only. Boot stages: runtime (runtime.json), core (Pyodide:
// download, then compile and start the interpreter, `downloading` false;
// or restore the build's memory snapshot of it: snapshot.js), packages
// (numpy, matplotlib…), wheel (dpdeck), warmup (first imports and a
// throwaway figure: warmup.js), ready. The boot starts when the worker does (the
// page's first script creates it); the page's "boot" request waits for it.
//
// It runs under the page's Content-Security-Policy (it starts from a blob:
// URL: workerstart.js), so nothing it or a cell does can reach another
// server; netguard.js adds the Spanish explanation, and cellscope.js undoes
// what one cell leaves behind (timers, listeners, globals) before the next.
//
// Here: the page's requests and their answers. boot.js boots Python, run.js
// runs a cell, downloads.js counts what the boot downloads, state.js holds
// what they share.

import { REQUEST, RUN_STATUS } from "../shared/protocol.js";
import { natives } from "./cellscope.js";
import { blockedOwnFiles, installNetworkGuard, takeViolations } from "./netguard.js";
import { keepPackages } from "./packagecopy.js";
import { keepSnapshot } from "./snapshot.js";
import { drawThrowawayFigure } from "./warmup.js";
import { WriteGate } from "./writegate.js";
import { countFetches } from "./downloads.js";
import { applyInterruptBuffer, failBoot, forgetUsedCopies, startBoot } from "./boot.js";
import { afterViolations, check, lab, run, waitForCellFiles } from "./run.js";
import { WORKER_URL, deviceStore, hasPort, post, state, usePort } from "./state.js";

// A listener on the global scope that runs before any a cell adds (capturing,
// added first) and lets none run after it: the page's first request, "boot",
// comes this way with the port the protocol runs over from then on (state.js);
// what comes this way after it is ignored.
natives.addEventListener(
  "message",
  (event) => {
    event.stopImmediatePropagation();
    if (hasPort()) return;
    const payload = event.data && event.data.payload;
    if (payload && payload.port instanceof MessagePort) {
      const port = payload.port;
      delete payload.port;
      port.onmessage = answer;
      usePort(port);
    }
    answer(event);
  },
  { capture: true },
);

async function answer(event) {
  const { id, type, payload } = event.data || {};
  const handler = HANDLERS[type];
  if (!handler) {
    post({ id, ok: false, error: { name: "UnknownRequest", message: `Petición desconocida: ${type}` } });
    return;
  }
  try {
    const { result, transfer } = await handler(payload || {});
    post({ id, ok: true, result }, transfer || []);
  } catch (error) {
    post({ id, ok: false, error: describeError(error) });
  }
}

// "fatal": Pyodide itself broke and the page must start a new worker.
// "policyBlocked": the page's policy blocked the deck's own files (see netguard.js).
function describeError(error) {
  const message = error && error.message ? String(error.message) : String(error);
  return {
    name: (error && error.name) || "Error",
    message,
    step: state.step,
    fatal: isFatal(error, message),
    policyBlocked: Boolean(error && error.policyBlocked),
  };
}

// Pyodide marks the error that broke it (a WebAssembly trap such as «memory
// access out of bounds» or «unreachable», a failed stack switch…), and every
// later call says it «already fatally failed».
function isFatal(error, message) {
  if (error && error.pyodide_fatal_error) return true;
  if (typeof WebAssembly !== "undefined" && error instanceof WebAssembly.RuntimeError) return true;
  return /fatal error|fatally failed/i.test(message);
}

// Every fetch counted for the progress bar (downloads.js); then every other way
// out (XMLHttpRequest, importScripts, WebSocket…) and the origin check in
// front of fetch: netguard.js. Installed after the counting fetch, so a
// refused request is never counted as a download.
countFetches(failBoot);
installNetworkGuard(self, WORKER_URL);

// The page asks for a lock only this worker holds: the browser releases it
// when the worker ends, for whatever reason (a crash, running out of memory),
// and the page, waiting for it, learns at once that Python is gone (python.js).
// Web Locks exist only in secure contexts (https, localhost).
function holdLifeLock(name) {
  if (!name || !self.navigator.locks) return Promise.resolve(false);
  return new Promise((held) => {
    self.navigator.locks
      .request(name, () => {
        held(true);
        return new Promise(() => {});
      })
      .catch(() => held(false));
  });
}

async function answerBoot({ base, interruptBuffer, lifeLock }) {
  state.interruptBuffer = interruptBuffer || null;
  applyInterruptBuffer();
  await holdLifeLock(lifeLock);
  try {
    return await startBoot(base || "../");
  } catch (error) {
    // A copy on the device that a failed boot used is deleted: «Reintentar»
    // (a new worker) downloads instead of failing the same way again.
    if (state.usedCopies.size && error && typeof error === "object") {
      await forgetUsedCopies();
      error.message = `${error.message} (se borró la copia de Python guardada en este dispositivo: al reintentar se descarga de nuevo)`;
    }
    // A policy that blocks the deck's own files (a browser that applies it
    // differently): the page then starts the worker from its own URL.
    await afterViolations();
    if (error && typeof error === "object" && blockedOwnFiles(takeViolations())) error.policyBlocked = true;
    throw error;
  }
}

// The throwaway figure a restored Python's boot left for when it is quiet
// (warmup.js); {drawn}. A figure that cannot be drawn is an error: the page
// then knows the restored Python is broken (python.js).
async function answerWarm() {
  if (!state.figureToWarm) return { result: { drawn: false } };
  state.figureToWarm = false;
  await waitForCellFiles();
  const { status, error } = drawThrowawayFigure(state.pyodide);
  if (status !== RUN_STATUS.DONE) {
    throw new Error(`la figura de prueba no se pudo dibujar (${error || status})`);
  }
  return { result: { drawn: true } };
}

// Keeps on the device, for its next boots, what the boot holds for it: the
// snapshot Python was restored from and the packages' files (snapshot.js,
// packagecopy.js). Answers {kept} and, when the storage refused, why
// (nothing to keep is not a failure).
async function answerKeep() {
  // The packages' copy is made once the rest of Python has arrived (remainder.js).
  if (state.remainder) await state.remainder.catch(() => {});
  const { snapshotToKeep: snapshot, packagesToKeep: packages } = state;
  state.snapshotToKeep = null;
  state.packagesToKeep = null;
  const copies = [
    snapshot && (() => keepSnapshot(deviceStore, snapshot)),
    packages && (() => keepPackages(deviceStore, packages.data, packages.description)),
  ].filter(Boolean);
  if (!copies.length) return { result: { kept: false } };
  return copyWrites.hold(writeCopies(copies));
}

async function writeCopies(copies) {
  // Each copy on its own: one the storage refuses does not stop the other.
  const reasons = [];
  for (const keep of copies) {
    try {
      await keep();
    } catch (error) {
      reasons.push(String((error && error.message) || error));
    }
  }
  return { result: reasons.length ? { kept: false, reason: reasons.join("; ") } : { kept: true } };
}

// Python runs nothing while a copy is being written to the device (writegate.js).
const copyWrites = new WriteGate();

const HANDLERS = {
  [REQUEST.BOOT]: answerBoot,
  [REQUEST.KEEP]: answerKeep,
  [REQUEST.WARM]: copyWrites.after(answerWarm),
  [REQUEST.RUN]: copyWrites.after(run),
  [REQUEST.CHECK]: copyWrites.after(check),
  [REQUEST.LAB]: copyWrites.after(lab),
};

// Python starts loading now, not when the page gets round to asking ("../": the deck's folder).
startBoot("../");
