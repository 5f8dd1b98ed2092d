"""``check``'s report: B² and the free bound beside every min_iterate line in text, JSON and CSV,
the notes in each, CSV at full precision, numbers formatted as the calculator's, and a
notebook-friendly result (short repr, HTML, frames with attrs)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from boundcalc.checking.runcheck import check_run

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def result():
    from tests.conftest import _plain_run

    return check_run(_plain_run(), rho=5)


def _min_lines(lines):
    return [x for x in lines if x["name"] == "min_iterate"]


def test_every_min_iterate_line_carries_b_squared_and_its_free_bound(result):
    for line in _min_lines(result.lines):
        assert line["trivial_bound_B2"] > 0
        assert line["free_bound"] == min(line["trivial_bound_B2"],
                                         next(x["measured"] for x in result.lines
                                              if x["name"] == "initial_loss"))
    table = result.text()
    assert " B² " in table.splitlines()[table.splitlines().index("Measured against bound") + 1]
    assert "= min(B², R̂(θ_0)))" in table


def test_json_carries_b_squared_and_the_notes(result):
    data = json.loads(result.text("json"))
    assert data["notes"] == result.notes and data["notes"]
    assert all(x["trivial_bound_B2"] is not None for x in _min_lines(data["lines"]))


def test_csv_keeps_full_precision_b_squared_and_the_notes(result):
    text = result.text("csv")
    rows = [r for r in csv.DictReader(io.StringIO(text)) if not r["route"].startswith("#")]
    assert len(rows) == len(result.lines)
    for row, line in zip(rows, result.lines, strict=True):
        assert float(row["measured"]) == line["measured"]  # no 6-digit rounding
        assert float(row["bound"]) == line["bound"]
    assert all(float(r["trivial_bound_B2"]) > 0 for r in rows if r["name"] == "min_iterate")
    assert [ln[2:] for ln in text.splitlines() if ln.startswith("# ")] == result.notes


def test_large_radii_print_as_numbers_not_40_digit_integers(plain_run):
    text = check_run(plain_run(), rho="1e40").text()
    assert "1e+40" in text and "0" * 30 not in text


def test_the_result_has_a_short_repr_html_and_frames_with_attrs(result):
    text = repr(result)
    assert text.startswith("RunCheck(") and "\n" not in text and len(text) < 200
    assert "violations" in text
    html = result._repr_html_()
    assert html.startswith("<div>") and "<table>" in html and "measured against bound" in html
    for frame in result.frames().values():
        assert frame.attrs["statement"] == "theorem1" and frame.attrs["notes"] == result.notes
        assert "version" in frame.attrs
