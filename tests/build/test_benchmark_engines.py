"""The engine benchmark's own parts that need no browser: how it reads a visit and what it concludes.

(`python3 build.py bench --engine webkit` itself prints figures and asserts nothing.)
"""

from __future__ import annotations

import pytest

from deckbuild import bench, bench_engines


def visit(ready_ms, *, figures=1, status="done", source="kept", store="opfs", notice=None) -> dict:
    """A visit as VISIT_SCRIPT reports it."""
    return {"state": "ready", "readyAtMs": ready_ms, "figureMs": 400, "figures": figures, "status": status,
            "notice": notice, "timings": {"snapshot": {"used": True, "source": source},
                                          "packagesCopy": {"source": source}, "store": store}}


def rounds(cold: list, warm: list) -> list[dict]:
    return [{"cold": first, "warm": second} for first, second in zip(cold, warm)]


@pytest.mark.parametrize(("webkit_ms", "met"), [((7_000, 5_000), True), ((9_000, 5_000), False),
                                                ((7_000, 7_000), False)],
                         ids=["cumple", "1.a-lenta", "2.a-lenta"])
def test_webkit_s_ready_is_held_to_twice_chromium_s_on_each_visit(capsys, webkit_ms, met):
    chromium = rounds([visit(4_000), visit(4_200), visit(3_900)], [visit(3_000), visit(2_900), visit(3_100)])
    webkit = rounds([visit(webkit_ms[0])] * 3, [visit(webkit_ms[1])] * 3)
    verdicts = bench_engines.summarize([{"label": "mazo"}], {"mazo": {"chromium": chromium, "webkit": webkit}})
    first, second, figures = verdicts
    # Medians: Chromium 4.0 s and 3.0 s.
    assert first[1] == pytest.approx(webkit_ms[0] / 4_000) and second[1] == pytest.approx(webkit_ms[1] / 3_000)
    assert (first[2] and second[2]) is met
    assert figures[2] is True
    assert "«Python listo», 1.ª visita" in capsys.readouterr().out


def test_a_visit_whose_figure_cell_did_not_draw_fails_the_figure_target(capsys):
    broken = visit(5_000, figures=0, status="error", notice="Python sufrió un error interno irrecuperable")
    results = {"mazo": {"chromium": rounds([visit(4_000)], [visit(3_000)]),
                        "webkit": rounds([visit(5_000)], [broken])}}
    verdicts = bench_engines.summarize([{"label": "mazo"}], results)
    assert verdicts[-1][2] is False
    assert "webkit, warm: la celda de la figura no dibujó (Python sufrió" in capsys.readouterr().out


def test_a_visit_is_described_in_one_line():
    line = bench_engines.describe_visit(visit(6_543, source="download", store="indexeddb"))
    assert line == ("listo 6.54 s, figura 0.40 s (done, 1), instantánea download, paquetes download,"
                    " copias en indexeddb")
    failed = bench_engines.describe_visit({"state": "error", "readyAtMs": None, "error": "Python no arrancó"})
    assert failed.startswith("listo —, figura — (Python no arrancó), instantánea sin instantánea")


def test_the_engine_option_leaves_chromium_s_benchmark_as_it_was():
    assert bench.parse_arguments([]).engine == "chromium"
    assert bench.parse_arguments(["--engine", "webkit", "--rounds", "2"]).engine == "webkit"
    with pytest.raises(SystemExit):
        bench.parse_arguments(["--engine", "presto"])


def test_a_visit_line_says_where_its_boot_spent_its_time():
    restored = visit(2_900, source="kept", store="indexeddb")
    restored["timings"].update(runtime=35, core=1_480, warmup=260)
    restored["timings"]["snapshot"].update(steps={"module": 910, "waited": 240, "libraries": 300},
                                           marks={"keptFoundAt": 700, "keptCheckedAt": 1_010})
    line = bench_engines.describe_visit(restored)
    assert line.endswith("; runtime.json 35 ms, intérprete 1480 ms, calentamiento 260 ms, módulo 910 ms,"
                         " espera 240 ms, bibliotecas 300 ms, copia hallada a 700 ms, copia comprobada a 1010 ms")
