// The plain page's side: start the worker, show when Python is ready, draw on ▶.
// It keeps the deck's markers (html[data-python], .cell[data-runs],
// .cell-output[data-origin=live] img) so the benchmark reads both pages alike.

const root = document.documentElement;
const status = document.getElementById("status");
const cell = document.querySelector(".cell");
const button = cell.querySelector("[data-action=run]");
const output = cell.querySelector(".cell-output");
const worker = new Worker("worker.js");
const waiting = new Map();
let nextId = 1;

worker.onmessage = (event) => {
  const { id, ok, result, error } = event.data;
  const callbacks = waiting.get(id);
  waiting.delete(id);
  if (ok) callbacks.resolve(result);
  else callbacks.reject(error);
};

function request(type, payload = {}) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    worker.postMessage({ id, type, payload });
  });
}

root.dataset.python = "loading";
request("boot").then(
  () => {
    root.dataset.python = "ready";
    status.textContent = "Python listo";
    button.disabled = false;
  },
  (error) => {
    root.dataset.python = "error";
    status.textContent = `Python no pudo cargarse: ${error.message}`;
  },
);

button.addEventListener("click", async () => {
  const result = await request("run", { cellId: "figura" });
  const image = new Image();
  image.src = URL.createObjectURL(new Blob([result.png], { type: "image/png" }));
  image.alt = "figura";
  output.replaceChildren(image);
  output.dataset.origin = "live";
  cell.dataset.runs = String(Number(cell.dataset.runs || 0) + 1);
});
