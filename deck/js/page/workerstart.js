// Starting the Python worker so that it runs under the page's
// Content-Security-Policy.
//
// A worker started from the deck's own js/worker.js URL would get its policy
// from that file's HTTP headers (none on a plain static server) and could
// reach any server. A worker started from a blob: URL instead takes a copy of
// the page's policy, <meta> tag included (HTML «run a worker»: a local-scheme
// worker clones its owner's policy container; Chromium, Firefox and WebKit do
// so for dedicated workers): `connect-src 'self'` and `script-src 'self'` then
// hold for everything the worker and its cells do, on any static host. The
// blob holds one line that loads js/worker.js by its absolute URL (a blob:
// worker has no folder of its own), and tells it that URL.
//
// `plain: true` starts js/worker.js directly: only when a browser's policy
// blocks the deck's own files inside the blob worker (python.js falls back to
// it once, and says so in the console).

/**
 * A Worker running js/worker.js (`workerUrl`, absolute). `plain`: start it
 * from its own URL instead of a blob: URL.
 */
export function startPolicedWorker(workerUrl, { plain = false } = {}) {
  if (plain) return new Worker(workerUrl);
  const source = `self.dpdeckWorkerUrl = ${JSON.stringify(workerUrl)};\nimportScripts(self.dpdeckWorkerUrl);\n`;
  const blobUrl = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  try {
    return new Worker(blobUrl);
  } finally {
    // The worker has read its script by the time it runs; the URL is not needed again.
    setTimeout(() => URL.revokeObjectURL(blobUrl), 60_000);
  }
}
