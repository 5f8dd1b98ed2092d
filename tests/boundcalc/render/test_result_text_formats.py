"""One result rendered (boundcalc/render/result_text.py): any flat section, in every format; NaN;
escapes."""

from __future__ import annotations

import csv
import io
import json

import pytest

from boundcalc.render.cell_text import FORMATS
from boundcalc.render.result_text import guarantee_line, render_result

DATA = {
    "statement": {"name": "demo", "title": "Demo bound", "summary": "A | B & C_1",
                  "guaranteed": False},
    "inputs": {"N": 100, "delta": 0.05, "mode": "derived", "eta": None},
    "quantities": {"alpha": 0.5, "phi0": 1.25e-7},
    "bound": {"true_loss": 3.5},
    "probability": 0.95,
    "conditions": [{"name": "alpha_positive", "holds": True, "detail": "alpha > 0"},
                   {"name": "n_large", "holds": False, "detail": "N >= 1000 fails"}],
    "version": "0.1.0",
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_extra_flat_section_is_rendered_in_every_format(fmt):
    text = render_result(DATA, fmt).replace("\\_", "_")  # LaTeX escapes underscores
    assert "phi0" in text and "alpha" in text and "true_loss" in text


def test_csv_is_long_format_with_exact_numbers():
    rows = list(csv.reader(io.StringIO(render_result(DATA, "csv"))))
    assert rows[0] == ["section", "name", "value"]
    assert ["quantities", "phi0", "1.25e-07"] in rows
    assert ["conditions", "n_large", "FAIL"] in rows
    assert ["conditions.detail", "n_large", "N >= 1000 fails"] in rows
    assert ["inputs", "eta", ""] in rows


def test_json_is_the_data_itself_and_rejects_non_finite_numbers():
    assert json.loads(render_result(DATA, "json")) == DATA
    with pytest.raises(ValueError):
        render_result({"bound": {"x": float("inf")}}, "json")


def test_not_guaranteed_label_names_the_failing_conditions():
    assert guarantee_line(DATA) == "NOT GUARANTEED: n_large fails, the bound is not guaranteed"
    for fmt in ("table", "markdown", "latex"):
        assert "NOT GUARANTEED" in render_result(DATA, fmt)


def test_latex_escapes_text_and_uses_booktabs():
    text = render_result(DATA, "latex", latex_names={"alpha": r"\alpha"})
    assert r"\toprule" in text and r"$\alpha$" in text
    assert r"1.25\times 10^{-7}" in text
    assert r"n\_large" in text and r"N \textgreater{}= 1000" in text


def test_table_rounds_to_the_requested_digits_and_shows_sources():
    text = render_result(DATA, "table", digits=3, sources={"N": "given (--N)"})
    assert "1.25e-07" in text and "given (--N)" in text


def test_unknown_format_is_rejected():
    with pytest.raises(ValueError, match="xml"):
        render_result(DATA, "xml")
