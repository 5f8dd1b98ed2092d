"""``reproduce --help`` and ``table --help`` are read from the experiment registry when shown:
an experiment registered at run time (after the CLI is built) is listed in both, with its
description, beside the built-in ones, the T sweep included."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest

from boundcalc.cli import main
from boundcalc.experiments.experiment_registry import (
    EXPERIMENTS,
    Experiment,
    names,
    register_experiment,
)


def _help(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--help"]) == 0
    return " ".join(out.getvalue().replace("│", " ").split())


@pytest.fixture
def toy() -> Iterator[Experiment]:
    """A toy experiment registered the documented way, removed again afterwards (its references
    are never loaded: only the help reads the row)."""
    row = register_experiment(Experiment(
        name="toyexp", label="the toy experiment", cells=lambda params: [],
        cell_pattern=r"x(?P<x>\d+)", cell_fields=("x",), group_columns=("x",),
        summarize="toy:summarize", tables="toy:tables", config="toy:Config",
        make_config="toy:make_config", write_outputs="toy:write_outputs",
        options=frozenset({"seeds", "dtype"}), needs_torch=False,
        description="a toy sweep of y = x² for the help test",
        table_description="per x, the toy's mean of y over seeds."))
    try:
        yield row
    finally:
        EXPERIMENTS.pop(row.name, None)


def test_reproduce_help_lists_every_registered_experiment_with_its_description(
        toy: Experiment, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    text = _help(["reproduce"])
    for name in names():
        assert f"{name}: {EXPERIMENTS[name].description}" in text
    assert "toyexp: a toy sweep of y = x² for the help test" in text
    assert "figure1, figure2, table1, tsweep or toyexp" in text   # the argument's help
    assert "figure1, figure2, tsweep and toyexp: float64 or float32" in text   # --dtype


def test_table_help_lists_every_registered_experiment_the_t_sweep_included(
        toy: Experiment, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    text = _help(["table"])
    assert "boundcalc reproduce figure1|figure2|table1|tsweep|toyexp" in text
    assert "tsweep: per (m, T) as figure1" in text
    assert "toyexp: per x, the toy's mean of y over seeds." in text
    assert "tsweep_table.tex / toyexp_table.tex" in text
    # brackets survive rich markup; how markup is rendered depends on rich's version, so, as for
    # the recorded help texts, this is asserted with the version the help was written for
    recorded = json.loads((Path(__file__).with_name("recorded") / "ENVIRONMENT.json")
                          .read_text(encoding="utf-8"))
    if version("rich") == recorded.get("rich"):
        assert "gmean [low, high]" in text


def test_help_forgets_an_experiment_once_it_is_unregistered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    assert "toyexp" not in _help(["reproduce"]) + _help(["table"])
