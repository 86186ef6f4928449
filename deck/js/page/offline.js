// The deck offline after one visit, as a reveal.js plugin: registers the
// service worker (sw.js, beside index.html, so it covers the deck's folder
// under any sub-path), asks it to keep Python's files once Python has booted
// here, offers a new version when one is installed, and says how far the
// caching is on <html data-offline> ("caching" | "ready") and
// data-offline-python ("ready" once Python's files are kept too).
//
// Both steps wait for Python to be quiet (config.js, `pythonCacheQuietMs`):
// the worker is registered once Python has booted (or is not downloading) and
// no cell has run for that long, since its first install reads and checks every
// file of the page (on two cores that took half a second from Python's boot);
// and it is asked to keep Python's files (reading and checking about 27 MB)
// only once Python has been ready that long with no cell running or waiting,
// so it never slows the first cells a person runs.
//
// Service workers need https or localhost; elsewhere (and on file://, in the
// speaker view's mirrors and in print) the deck works as before, online.

import defaults from "./config.js";
import { isPrintPdf, isReceiver } from "./page.js";
import { Toast } from "./status.js";

const SERVICE_WORKER = "sw.js";
// The worker's messages (serviceworker.js).
const MESSAGE = Object.freeze({ STATUS: "offline-status", CACHE_PYTHON: "cache-python", TAKE_OVER: "take-over" });
// The toast offering a new version stays this long.
const UPDATE_OFFER_MS = 60_000;

const supported =
  "serviceWorker" in navigator && window.isSecureContext && /^https?:$/.test(window.location.protocol);

export function OfflineDeck() {
  let registration = null;
  let status = null;
  let pythonCacheQuietMs = 0;
  let reveal = null;
  const root = document.documentElement;

  const show = (data) => {
    status = data;
    const complete = (group) => group.total > 0 && group.stored === group.total;
    root.dataset.offline = complete(data.page) ? "ready" : "caching";
    if (complete(data.python)) root.dataset.offlinePython = "ready";
    else delete root.dataset.offlinePython;
  };

  const post = async (type) => {
    const ready = await navigator.serviceWorker.ready;
    if (ready.active) ready.active.postMessage({ type });
  };

  const offerUpdate = (waiting) => {
    const toast = new Toast();
    toast.show("Hay una versión nueva de las diapositivas", {
      actionText: "Actualizar",
      actionName: "update-deck",
      durationMs: UPDATE_OFFER_MS,
      action: () => waiting.postMessage({ type: MESSAGE.TAKE_OVER }),
    });
  };

  const watchForUpdates = () => {
    if (registration.waiting && navigator.serviceWorker.controller) offerUpdate(registration.waiting);
    registration.addEventListener("updatefound", () => {
      const installing = registration.installing;
      installing.addEventListener("statechange", () => {
        // A first install just starts working; a new version waits to be asked.
        if (installing.state === "installed" && navigator.serviceWorker.controller) offerUpdate(installing);
      });
    });
    let reloading = false;
    navigator.serviceWorker.addEventListener("controllerchange", () => {
      // Taken over after «Actualizar»: the page reloads as the new version.
      if (reloading) return;
      reloading = true;
      window.location.reload();
    });
  };

  const register = async () => {
    try {
      registration = await navigator.serviceWorker.register(SERVICE_WORKER, { scope: "./" });
    } catch (error) {
      console.warn("dpdeck: sin copia para usar sin conexión:", error.message);
      return;
    }
    navigator.serviceWorker.addEventListener("message", (event) => {
      if (event.data && event.data.type === MESSAGE.STATUS) show(event.data);
    });
    root.dataset.offline = "caching";
    watchForUpdates();
    await post(MESSAGE.STATUS);
    keepPythonWhenQuiet();
  };

  // Python booted here: its files are kept too (a new visit offline boots from
  // them), asked for once, after pythonCacheQuietMs of Python ready with no
  // cell running or queued.
  const keepPythonWhenQuiet = () => {
    const deck = reveal.getPlugin("dpdeck");
    if (deck) deck.afterPythonQuiet(pythonCacheQuietMs, () => post(MESSAGE.CACHE_PYTHON), { readyOnly: true });
  };

  return {
    id: "dpdeck-offline",
    init(instance) {
      if (!supported || isPrintPdf || isReceiver) return;
      reveal = instance;
      ({ pythonCacheQuietMs } = { ...defaults.dpdeck, ...reveal.getConfig().dpdeck });
      // After the first slide, and once Python has started and been quiet for
      // pythonCacheQuietMs: registering installs the worker, which reads and checks
      // the page's files once more (from the HTTP cache, mostly), work a first
      // visit would otherwise take from Python's start on a laptop's two cores.
      reveal.on("ready", () => {
        const later = () =>
          "requestIdleCallback" in window ? requestIdleCallback(register, { timeout: 3000 }) : setTimeout(register, 1000);
        const afterLoad = () => {
          if (document.readyState === "complete") later();
          else window.addEventListener("load", later, { once: true });
        };
        const deck = reveal.getPlugin("dpdeck");
        if (deck) deck.afterPythonQuiet(pythonCacheQuietMs, afterLoad);
        else afterLoad();
      });
    },
    /** What the service worker keeps: {build, page: {stored, total}, python: {stored, total}}, or null. */
    get status() {
      return status;
    },
  };
}
