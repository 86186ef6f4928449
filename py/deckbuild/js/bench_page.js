// Injected by the benchmark before any script of the measured page runs.
// Everything is timed inside the page (performance.now(): ms since the
// navigation started), so no round trip to the benchmark process is counted.
//
//   window.__bench.marks   painted, ready, figureClicked, figureShown (ms)
//   window.__bench.boot    the worker's reply to "boot" (its own step timings)
//   window.__bench.runs    [{cellId, elapsedMs}] from the worker's "run" replies
//   window.__bench.timeOrigin  the navigation's start (ms since the epoch)
//
// The page's contract, shared by the deck and the plain page:
// <html data-python="ready|error">, `.cell[data-figures]` cells with a
// `[data-action=run]` button and a `data-runs` counter, live figures as
// `.cell-output[data-origin=live] img`. A worker speaks {id, type, payload}
// and answers {id, ok, result}, on its own global or on a port the page gave it.
(() => {
  const config = __BENCH_CONFIG__;
  // timeOrigin: when the navigation started, in ms since the epoch (the servers' clock).
  const bench = { marks: {}, boot: null, runs: [], errors: [], timeOrigin: performance.timeOrigin };
  window.__bench = bench;
  const mark = (name) => {
    if (!(name in bench.marks)) bench.marks[name] = performance.now();
  };
  const nextFrame = () => new Promise((resolve) => requestAnimationFrame(resolve));

  // ---- worker messages: the boot reply and each run's own elapsed time
  // A worker speaks on its own global (the plain page) or, once its first request has
  // brought it one, on a port of a MessageChannel the page made (the deck): both are heard.
  const requests = new Map();
  const hear = (event) => {
    const reply = event.data;
    const request = reply && requests.get(reply.id);
    if (!request) return;
    requests.delete(reply.id);
    if (request.type === "boot") bench.boot = reply.ok ? reply.result : { error: reply.error };
    if (request.type === "run" && reply.ok) {
      bench.runs.push({ cellId: request.payload && request.payload.cellId, elapsedMs: reply.result.elapsedMs });
    }
  };
  const watchRequests = (target) => {
    const postMessage = target.postMessage.bind(target);
    target.postMessage = (message, ...rest) => {
      if (message && message.id !== undefined) requests.set(message.id, message);
      return postMessage(message, ...rest);
    };
    target.addEventListener("message", hear);
  };
  const NativeWorker = window.Worker;
  window.Worker = class BenchWorker extends NativeWorker {
    constructor(...args) {
      super(...args);
      watchRequests(this);
    }
  };
  const NativeChannel = window.MessageChannel;
  window.MessageChannel = class BenchChannel extends NativeChannel {
    constructor(...args) {
      super(...args);
      watchRequests(this.port1);
    }
  };

  // ---- first slide painted: the frame after one is rendered, laid out and opaque
  function isVisible(element) {
    const box = element.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && element.checkVisibility({ opacityProperty: true, visibilityProperty: true });
  }

  async function watchPaint() {
    for (;;) {
      await nextFrame();
      if (!Array.from(document.querySelectorAll(config.paintSelector)).some(isVisible)) continue;
      await nextFrame();
      mark("painted");
      if (config.gotoFigureSlide) gotoFigureSlide();
      return;
    }
  }

  function figureCell() {
    return document.querySelector('.cell[data-figures]:not([data-figures="0"])');
  }

  // The figure cell's slide is put on screen before Python is ready, so the
  // figure is measured to the moment it is visible.
  async function gotoFigureSlide() {
    const cell = figureCell();
    const section = cell && cell.closest(".slides > section");
    if (!section) return;
    while (!(window.Reveal && window.Reveal.isReady && window.Reveal.isReady())) await nextFrame();
    const indices = window.Reveal.getIndices(section);
    window.Reveal.slide(indices.h, indices.v);
  }

  // ---- Python ready, then ▶ on the first figure cell at once
  function waitFor(check) {
    return new Promise((resolve) => {
      const found = check();
      if (found) return resolve(found);
      const observer = new MutationObserver(() => {
        const value = check();
        if (value) {
          observer.disconnect();
          resolve(value);
        }
      });
      observer.observe(document.documentElement, { attributes: true, childList: true, subtree: true });
    });
  }

  async function figureShown(cell, runsBefore) {
    await waitFor(() => Number(cell.dataset.runs || 0) > runsBefore);
    const image = cell.querySelector(".cell-output[data-origin=live] img");
    if (!image) {
      bench.errors.push(`la celda ${cell.dataset.cellId} no mostró ninguna figura`);
      return;
    }
    if (!image.complete) await image.decode().catch(() => {});
    await nextFrame();
    await nextFrame();
    mark("figureShown");
  }

  async function watchReady() {
    const state = await waitFor(() => {
      const value = document.documentElement.dataset.python;
      return value === "ready" || value === "error" ? value : null;
    });
    mark(state);
    if (state !== "ready" || !config.clickFigure) return;
    const cell = figureCell();
    if (!cell) return;
    const button = await waitFor(() => cell.querySelector("[data-action=run]"));
    const runsBefore = Number(cell.dataset.runs || 0);
    mark("figureClicked");
    button.click();
    await figureShown(cell, runsBefore);
  }

  // From the first frame on: the page may paint its first slide before it is fully parsed.
  watchPaint();
  document.addEventListener("DOMContentLoaded", () => watchReady());

  // ---- every cell, one after the other (called by the benchmark)
  bench.runAllCells = async (timeoutMs) => {
    const results = [];
    for (const cell of document.querySelectorAll(".cell[data-cell-id]")) {
      const button = cell.querySelector("[data-action=run]");
      if (!button) continue;
      const runsBefore = Number(cell.dataset.runs || 0);
      const known = bench.runs.length;
      const started = performance.now();
      button.click();
      const finished = await Promise.race([
        waitFor(() => Number(cell.dataset.runs || 0) > runsBefore),
        new Promise((resolve) => setTimeout(() => resolve(false), timeoutMs)),
      ]);
      const pageMs = performance.now() - started;
      const reply = bench.runs.slice(known).find((run) => run.cellId === cell.dataset.cellId);
      results.push({
        cellId: cell.dataset.cellId,
        pageMs: finished ? pageMs : null,
        elapsedMs: reply ? reply.elapsedMs : null,
        status: cell.dataset.status || "",
      });
    }
    return results;
  };
})();
