"""Pruebas de deck/js/worker/functiontable.js: the table of functions laid out alike in every engine, run in node.

Node's V8 keeps a function's identity between a table and a module's
exports, as the engine the build takes its snapshot in does; JavaScriptCore
does not, and is played here by a table whose `get` answers each slot with an
object of its own (as WebKitGTK 2.50 does for a slot an element segment
filled) and whose `set` keeps what it is given. The table's checksum is
checked against FNV-1a computed here in Python, the independent reference.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deckjs import run_with_module

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONTABLE_JS = ROOT / "deck" / "js" / "worker" / "functiontable.js"

# A table as JavaScriptCore answers it: a slot filled by an element segment
# gives an object of its own, named by the function's index in its module; a
# slot set from JavaScript gives back what was set.
FAKE_TABLE_JS = r"""
function wrapper(index) {
  const made = function () {};
  Object.defineProperty(made, 'name', {value: String(index)});
  return made;
}
function fakeTable(slots) {
  const entries = slots.slice();
  const log = [];
  return {
    get length() { return entries.length; },
    get: (slot) => entries[slot],
    set: (slot, value) => { log.push(slot); entries[slot] = value; },
    entries, log,
  };
}
const print = (value) => process.stdout.write(JSON.stringify(value));
"""


def run_table_js(script: str, *arguments: str):
    result = run_with_module(FUNCTIONTABLE_JS, FAKE_TABLE_JS + script, *arguments)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_node_keeps_function_identity_like_the_engine_the_snapshot_is_taken_in():
    assert run_table_js("print(deckModule.exports.keepsFunctionIdentity());") is True


MATCH_JS = r"""
const {matchExportedFunctions} = deckModule.exports;
const exports = {f: wrapper(5), g: wrapper(7), datos: 1234};
exports.alias = exports.f;                       // two names, one function
const imported = wrapper(5);                     // another module's function 5
const slots = [wrapper(5), wrapper(9), imported, null, wrapper(7), wrapper(5)];
const table = fakeTable(slots);
const known = new Set([imported]);
const matched = matchExportedFunctions(table, exports, 0, 5, known);
print({
  matched,
  set: table.log,
  slots: table.entries.map((value) => value === exports.f ? 'f' : value === exports.g ? 'g'
                                      : value === imported ? 'importada' : value === null ? null : 'propia'),
  known: [known.has(exports.f), known.has(exports.g), known.size],
});
"""


def test_each_slot_holding_an_exported_function_answers_with_the_exported_object():
    run = run_table_js(MATCH_JS)
    # Slot 0 holds export f, slot 4 export g; slot 1 an unexported function, slot 2 an
    # import of the same index (known: left as it is), slot 3 nothing; slot 5 is outside [0, 5).
    assert run["slots"] == ["f", "propia", "importada", None, "g", "propia"]
    assert run["matched"] == 2 and run["set"] == [0, 4]
    # The module's exports are known from now on: a later module's slot holding one is an import.
    assert run["known"] == [True, True, 3]


MATCHER_JS = r"""
const {FunctionTableMatcher} = deckModule.exports;
const [needed, fail] = process.argv.slice(1).map(JSON.parse);
// A real module: a function f, exported, and a table t holding it.
const bytes = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 127, 3, 2, 1, 0, 4, 4, 1, 112, 0, 1,
  7, 9, 2, 1, 102, 0, 0, 1, 116, 1, 0, 9, 7, 1, 0, 65, 0, 11, 1, 0, 10, 6, 1, 4, 0, 65, 1, 11]);
const instantiate = WebAssembly.instantiate;
(async () => {
  const matcher = new FunctionTableMatcher();
  matcher.needed = needed;
  const table = fakeTable([null, null, wrapper(0), wrapper(3)]);
  let exports = null;
  let error = null;
  try {
    await matcher.library(table, 2, 4, async () => {
      exports = (await WebAssembly.instantiate(bytes)).instance.exports;
      if (fail) throw new Error('la biblioteca no carga');
    });
  } catch (caught) {
    error = caught.message;
  }
  // The main module: matched when Pyodide's instantiateWasm hands it over, before Emscripten receives it.
  const settings = {instantiateWasm: (imports, receive) => receive({exports: {f: exports.f}}, 'modulo')};
  const main = fakeTable([wrapper(0)]);
  matcher.watchMain(settings);
  let received = null;
  settings.instantiateWasm({env: {__indirect_function_table: main}}, (instance, module) => {
    received = [main.get(0) === exports.f, module];
  });
  print({error, matched: matcher.matched, slot2: table.get(2) === exports.f, set: table.log,
         received, restored: WebAssembly.instantiate === instantiate});
})();
"""


def test_a_library_s_slots_are_matched_as_it_is_instantiated_and_the_hook_is_put_back():
    run = run_table_js(MATCHER_JS, "true", "false")
    assert run["slot2"] is True and run["set"] == [2]
    assert run["received"] == [True, "modulo"] and run["matched"] == 2
    assert run["error"] is None and run["restored"] is True


def test_a_library_that_fails_to_load_still_puts_the_hook_back():
    run = run_table_js(MATCHER_JS, "true", "true")
    assert run["error"] == "la biblioteca no carga" and run["restored"] is True


def test_an_engine_that_keeps_identity_changes_nothing():
    run = run_table_js(MATCHER_JS, "false", "false")
    assert run["set"] == [] and run["matched"] == 0 and run["received"] == [False, "modulo"]
    assert run["restored"] is True


DESCRIBE_JS = r"""
const {describeFunctionTable} = deckModule.exports;
const [length, entries] = process.argv.slice(1).map(JSON.parse);
const GOT = {};
for (const [name, value] of entries) GOT[name] = {value};
print(describeFunctionTable({GOT, wasmTable: {length}}));
"""


def fnv1a_of_values(values: list[int]) -> str:
    """FNV-1a (32 bits) over each value's two 16-bit halves, low first: the reference."""
    digest = 0x811C9DC5
    for value in values:
        for half in (value & 0xFFFF, (value >> 16) & 0xFFFF):
            digest = ((digest ^ half) * 0x01000193) % 2**32
    return f"{len(values)}:{digest:08x}"


GOT_ENTRIES = [["PyInit__path", 12_000], ["PyFloat_Type", 3_212_345], ["_ZTIN4kiwi8VariableE", 16_085_472],
               ["memcpy", 4_294_967_295]]


def describe(length: int, entries: list) -> dict:
    return run_table_js(DESCRIBE_JS, json.dumps(length), json.dumps(entries))


def test_the_table_s_checksum_is_fnv1a_of_the_got_values_in_the_linker_s_order():
    assert describe(21_850, GOT_ENTRIES) == {"length": 21_850, "got": fnv1a_of_values([v for _, v in GOT_ENTRIES]),
                                             "countArgs": 0}


@pytest.mark.parametrize("change", ["value", "order", "one-more"])
def test_any_other_layout_gives_another_checksum(change):
    changed = [list(entry) for entry in GOT_ENTRIES]
    if change == "value":
        changed[0][1] += 1
    elif change == "order":
        changed[0], changed[1] = changed[1], changed[0]
    else:
        changed.append(["extra", 0])
    assert describe(21_850, changed)["got"] != describe(21_850, GOT_ENTRIES)["got"]


FITS_JS = r"""
const {tableFits} = deckModule.exports;
const [found, recorded] = process.argv.slice(1).map(JSON.parse);
print(tableFits(found, recorded));
"""

RECORDED = {"length": 21_850, "got": "10920:88f5975f", "countArgs": 0}


@pytest.mark.parametrize(("found", "recorded", "fits"), [
    (RECORDED, RECORDED, True),
    # An engine with WebAssembly GC adds the argument-counting helper the build (Node 20) lacked: the
    # memory says 0, CPython never calls it, and the next library's slots take its place.
    ({**RECORDED, "countArgs": 11_916}, RECORDED, True),
    ({**RECORDED, "length": 21_851}, RECORDED, False),
    ({**RECORDED, "got": "10920:00000000"}, RECORDED, False),
    # A build that had the helper (Node 22) and an engine that has none (iOS): the memory's slot is empty.
    ({**RECORDED, "countArgs": 0}, {**RECORDED, "countArgs": 11_916}, False),
    ({**RECORDED, "countArgs": 11_916}, {**RECORDED, "countArgs": 11_916}, True),
], ids=["igual", "ayudante-de-mas", "longitud", "got", "ayudante-de-menos", "mismo-ayudante"])
def test_a_table_fits_when_every_function_pointer_in_the_memory_finds_its_function(found, recorded, fits):
    assert run_table_js(FITS_JS, json.dumps(found), json.dumps(recorded)) is fits
