"""Pruebas de deck/js/worker/writegate.js: Python runs nothing while the worker writes its copies to the device, run in node.

The worker wraps ▶, the checks, the lab and the warm-up figure in the gate
(worker.js); a request that arrives during a write is answered only once the
write has settled, whether it was kept or refused, and one that arrives with
no write under way is answered at once.
"""

from __future__ import annotations

import json
from pathlib import Path

from deckjs import run_with_module

ROOT = Path(__file__).resolve().parents[2]
WRITEGATE_JS = ROOT / "deck" / "js" / "worker" / "writegate.js"

# Each scenario logs, in order, when a write ends («fin»), what the write
# answered («guardada», «rechazada») and when a request is answered
# («respuesta»); a write ends only when the script ends it, after waiting
# `pause` milliseconds for anything that should not have happened to happen.
SCENARIOS_JS = r"""
const {WriteGate} = deckModule.exports;
const [scenario] = process.argv.slice(1);
const log = [];
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const write = (name, {fails = false} = {}) => {
  let settle;
  const promise = new Promise((resolve, reject) => { settle = () => (fails ? reject(new Error(name)) : resolve(name)); });
  return {promise, end: () => { log.push(`fin ${name}`); settle(); }};
};
(async () => {
  const gate = new WriteGate();
  const run = gate.after(async (payload) => { log.push(`respuesta ${payload}`); return payload; });
  const held = [];
  if (scenario === 'sin-escritura') {
    held.push(run('celda'));
  } else {
    const first = write('copias', {fails: scenario === 'rechazada'});
    const kept = gate.hold(first.promise).then((value) => log.push(`guardada ${value}`),
                                             (error) => log.push(`rechazada ${error.message}`));
    held.push(run('celda'));
    await pause(20);
    let second = null;
    if (scenario === 'otra-escritura') {
      second = write('otra');
      gate.hold(second.promise);
      held.push(run('segunda'));
    }
    await pause(20);
    first.end();
    await kept;
    await pause(20);
    if (second) second.end();
  }
  await Promise.all(held);
  process.stdout.write(JSON.stringify(log));
})().catch((error) => { console.error(error); process.exit(1); });
"""


def run_scenario(scenario: str) -> list[str]:
    result = run_with_module(WRITEGATE_JS, SCENARIOS_JS, scenario)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_request_with_no_write_under_way_is_answered_at_once():
    assert run_scenario("sin-escritura") == ["respuesta celda"]


def test_a_request_during_a_write_is_answered_after_it_and_the_write_s_answer_is_kept():
    assert run_scenario("guardada") == ["fin copias", "guardada copias", "respuesta celda"]


def test_a_write_the_storage_refuses_still_lets_python_run():
    assert run_scenario("rechazada") == ["fin copias", "rechazada copias", "respuesta celda"]


def test_a_write_started_while_a_request_waits_is_waited_for_too():
    log = run_scenario("otra-escritura")
    assert log[:3] == ["fin copias", "guardada copias", "fin otra"]
    assert sorted(log[3:]) == ["respuesta celda", "respuesta segunda"]


def test_every_request_that_runs_python_waits_for_the_worker_s_writes():
    worker = (ROOT / "deck" / "js" / "worker" / "worker.js").read_text(encoding="utf-8")
    handlers = worker[worker.index("const HANDLERS = {"):]
    handlers = handlers[:handlers.index("};")]
    for request in ("WARM", "RUN", "CHECK", "LAB"):
        assert f"[REQUEST.{request}]: copyWrites.after(" in handlers, request
    assert "return copyWrites.hold(writeCopies(copies));" in worker
