"""Pruebas de dpdeck.classroom.protocol: el contrato de las celdas, igual en Python y en la página.

The contract's values live once, in py/dpdeck/classroom/protocol.json. These tests check
that dpdeck.classroom.protocol reads it faithfully and that deck/js/shared/protocol.js (bundled
by the same esbuild the build uses, then run in node) exposes exactly the same
names, values and markup. That run_cell speaks only the contract's words is
checked in test_cellrun.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from deckjs import run_with_module
from dpdeck.classroom import protocol

ROOT = Path(__file__).resolve().parents[3]
PROTOCOL_JS = ROOT / "deck" / "js" / "shared" / "protocol.js"

CONTRACT = json.loads(resources.files("dpdeck.classroom").joinpath("protocol.json").read_text(encoding="utf-8"))

# Bundles protocol.js with esbuild (as the build does), runs it, and prints its
# exports as JSON together with what its functions answer for the samples.
DUMP_PROTOCOL_JS = r"""
const [samplesJson] = process.argv.slice(1);
const p = deckModule.exports;
const samples = JSON.parse(samplesJson);
const constants = {};
for (const [name, value] of Object.entries(p)) if (typeof value !== 'function') constants[name] = value;
process.stdout.write(JSON.stringify({
  constants,
  functions: Object.keys(p).filter((name) => typeof p[name] === 'function').sort(),
  outputClass: samples.classes.map(([kind, stream]) => p.outputClass(kind, stream)),
  figureAlt: samples.figures.map(([number, cell]) => p.figureAlt(number, cell)),
  errorText: samples.errors.map((output) => p.errorText(output)),
}));
"""

SAMPLES = {
    "classes": [["stream", "stdout"], ["stream", "stderr"], ["stream", "otro"], ["value", ""],
                ["figure", ""], ["error", ""]],
    "figures": [[1, "Histograma de 2000 restas"], [12, "Error de la suma contra la cota b: mínimo en b ≈ 15 849."]],
    "errors": [{"ename": "ValueError", "evalue": "malo", "traceback": "Error en la línea 1."},
               {"ename": "ValueError", "evalue": "malo"}],
}


def as_dict(names) -> dict:
    return dict(names._asdict())


def names_of(values) -> dict:
    return {value.upper(): value for value in values}


@pytest.fixture(scope="module")
def page_side() -> dict:
    """What deck/js/shared/protocol.js exports, once bundled by esbuild."""
    result = run_with_module(PROTOCOL_JS, DUMP_PROTOCOL_JS, json.dumps(SAMPLES), timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# ------------------------------------------------------------- Python side


def test_limits_come_from_the_contract_file():
    limits = CONTRACT["limits"]
    assert protocol.MAX_OUTPUT_CHARS == limits["maxOutputChars"] == 20_000
    assert protocol.MAX_FIGURES == limits["maxFigures"] == 20
    assert protocol.STREAM_EVENTS_PER_SECOND == limits["streamEventsPerSecond"]
    assert protocol.STREAM_EVENT_BURST == limits["streamEventBurst"]


def test_name_sets_keep_the_contracts_order():
    assert tuple(protocol.REQUEST) == ("boot", "run", "check", "lab", "keep", "warm")
    assert tuple(protocol.EVENT) == ("progress", "stream")
    assert tuple(protocol.BOOT_STAGE) == ("runtime", "core", "packages", "wheel", "warmup", "ready")
    assert tuple(protocol.RUN_STATUS) == tuple(CONTRACT["runStatuses"])
    assert tuple(protocol.OUTPUT) == ("stream", "value", "figure", "error")
    assert protocol.OUTPUT.FIGURE == "figure" and protocol.STREAM.STDERR == "stderr"
    with pytest.raises(AttributeError):
        protocol.OUTPUT.IMAGE  # noqa: B018  (a name outside the contract is an error, not a string)


def test_markup_helpers():
    assert protocol.output_class("stream", stream="stderr") == "out-stream out-stderr"
    assert protocol.output_class("stream", stream="otro") == "out-stream out-stdout"
    assert protocol.output_class("figure") == "out-figure"
    assert protocol.figure_alt(2, "ε total contra k") == "Figura 2: ε total contra k"
    assert protocol.error_text({"ename": "KeyError", "evalue": "'x'"}) == "KeyError: 'x'"
    assert protocol.error_text({"ename": "E", "evalue": "m", "traceback": "traza"}) == "traza"
    assert protocol.NOTICE_CLASS.split() == ["out-error", "out-notice"]
    assert protocol.OUTPUT_AREA_CLASS == "cell-output"


def test_the_contract_cannot_be_changed_from_python():
    with pytest.raises(TypeError):
        protocol.OUTPUT_MARKUP["value"]["class"] = "otra"  # type: ignore[index]
    with pytest.raises(AttributeError):
        protocol.OUTPUT.VALUE = "otro"  # type: ignore[misc]


# ------------------------------------------------------------- both sides agree


def test_protocol_js_exposes_the_same_contract_as_python(page_side):
    js = page_side["constants"]
    assert js["MAX_OUTPUT_CHARS"] == protocol.MAX_OUTPUT_CHARS
    assert js["MAX_FIGURES"] == protocol.MAX_FIGURES
    assert js["STREAM_EVENTS_PER_SECOND"] == protocol.STREAM_EVENTS_PER_SECOND
    assert js["STREAM_EVENT_BURST"] == protocol.STREAM_EVENT_BURST
    for js_name, names in [("REQUEST", protocol.REQUEST), ("EVENT", protocol.EVENT),
                           ("BOOT_STAGE", protocol.BOOT_STAGE), ("RUN_STATUS", protocol.RUN_STATUS),
                           ("STREAM", protocol.STREAM), ("OUTPUT", protocol.OUTPUT),
                           ("ORIGIN", protocol.ORIGIN), ("CELL_STATUS", protocol.CELL_STATUS)]:
        # Same names, same values, same order.
        assert list(js[js_name].items()) == list(as_dict(names).items()), js_name
    assert js["OUTPUT_TAG"] == {kind: markup["tag"] for kind, markup in protocol.OUTPUT_MARKUP.items()}
    assert js["NOTICE_CLASS"] == protocol.NOTICE_CLASS
    assert js["OUTPUT_AREA_CLASS"] == protocol.OUTPUT_AREA_CLASS
    assert (js["NOTICE_TAG"], js["OUTPUT_AREA_TAG"]) == (CONTRACT["notice"]["tag"], CONTRACT["outputArea"]["tag"])


def test_protocol_js_renders_markup_as_python_does(page_side):
    assert page_side["functions"] == ["errorText", "figureAlt", "outputClass"]
    assert page_side["outputClass"] == [protocol.output_class(kind, stream=stream)
                                        for kind, stream in SAMPLES["classes"]]
    assert page_side["figureAlt"] == [protocol.figure_alt(number, cell) for number, cell in SAMPLES["figures"]]
    assert page_side["errorText"] == [protocol.error_text(output) for output in SAMPLES["errors"]]


def test_every_value_of_the_contract_file_reaches_the_page(page_side):
    js = page_side["constants"]
    assert js["REQUEST"] == names_of(CONTRACT["requests"])
    assert js["OUTPUT"] == names_of(CONTRACT["outputs"])
    assert js["ORIGIN"] == names_of(CONTRACT["outputArea"]["origins"])
    assert js["CELL_STATUS"] == names_of(CONTRACT["cellStatuses"])


def test_a_package_without_its_contract_file_says_which_file_is_missing(tmp_path):
    package = tmp_path / "dpdeck" / "classroom"
    package.mkdir(parents=True)
    for folder in (package.parent, package):
        (folder / "__init__.py").write_text("", encoding="utf-8")
    shutil.copyfile(protocol.__file__, package / "protocol.py")
    result = subprocess.run([sys.executable, "-c", "import dpdeck.classroom.protocol"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "ImportError: el paquete dpdeck está incompleto: le falta protocol.json" in result.stderr, result.stderr


# ------------------------------------------------------------- the classroom's messages


def test_the_classrooms_names_come_from_the_contract_file():
    assert protocol.MIRROR_CHANNEL == CONTRACT["mirror"]["channel"]
    assert tuple(protocol.MIRROR_TO_DECK) == tuple(CONTRACT["mirror"]["toDeck"])
    assert protocol.MIRROR_TO_DECK.RUN_SLIDE == "runSlide"   # camelCase values, UPPER_SNAKE names
    assert tuple(protocol.MIRROR_TO_SPEAKER) == tuple(CONTRACT["mirror"]["toSpeaker"])
    assert dict(protocol.FOLLOW) == CONTRACT["follow"]
    assert (protocol.WORK_FORMAT, protocol.WORK_VERSION, protocol.WORK_MAX_BYTES) == (
        CONTRACT["work"]["format"], CONTRACT["work"]["version"], CONTRACT["work"]["maxBytes"])
    with pytest.raises(TypeError):
        protocol.FOLLOW["maxFollowers"] = 10**6  # type: ignore[index]


def test_protocol_js_has_the_same_classroom_names(page_side):
    js = page_side["constants"]
    assert js["MIRROR_CHANNEL"] == protocol.MIRROR_CHANNEL
    assert list(js["MIRROR_TO_DECK"].items()) == list(as_dict(protocol.MIRROR_TO_DECK).items())
    assert list(js["MIRROR_TO_SPEAKER"].items()) == list(as_dict(protocol.MIRROR_TO_SPEAKER).items())
    assert js["FOLLOW"] == dict(protocol.FOLLOW)
    assert js["WORK"] == CONTRACT["work"]
