"""A stored run's figure redrawn from its cells (validators/experiments/figures.py): the PNG, PDF
and caption land where asked with no scratch left behind and the cells untouched, without torch;
a run with no finished cells, or an experiment without a figure, draws nothing."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")
torch = pytest.importorskip("torch")

from boundcalc.validators.experiments import figure2  # noqa: E402
from boundcalc.validators.experiments.figures import regenerate_figures  # noqa: E402

from boundcalc.runs.directory import RunDirectory  # noqa: E402
from boundcalc.runs.stored import load_run  # noqa: E402

pytestmark = pytest.mark.needs_torch


def _figure2_run(path: Path, cells: bool = True) -> Path:
    """A figure-2 run directory of fake cells in the stored format (2 seeds, lags 4 and 16)."""
    cfg = figure2.make_config("quick", seeds=2, device="cpu", lags=(4, 16))
    run = RunDirectory(path, config={"experiment": "figure2", "preset": "quick", **asdict(cfg)})
    rng = np.random.default_rng(0)
    for model, L, seed in (figure2.all_cells(cfg) if cells else []):
        run.save_cell(figure2.cell_key(model, L, seed), {
            "model": model, "L": L, "T": L + 1, "seed": seed, "diverged": False,
            "max_jacobian": float(rng.lognormal()), "min_val_loss": float(rng.uniform(0.5, 1)),
            "max_loss_gradient": float(rng.lognormal()),
            "memory_floats_per_sample": (L + 1) * 17 if model == "transformer" else cfg.m})
    return run.path


def _cells(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (run / "cells").iterdir()}


@pytest.mark.slow
def test_the_figure_is_drawn_where_asked_and_the_cells_are_left_as_they_were(tmp_path):
    run = _figure2_run(tmp_path / "figure2-quick")
    before = _cells(run)
    target = tmp_path / "figures"
    written = regenerate_figures(load_run(run), target, "single")
    assert sorted(p.name for p in written) == ["figure2.caption.txt", "figure2.pdf",
                                               "figure2.png"]
    assert all(p.parent == target for p in written)
    assert sorted(p.name for p in target.iterdir()) == sorted(p.name for p in written)  # no scratch
    assert (target / "figure2.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (target / "figure2.pdf").read_bytes()[:5] == b"%PDF-"
    assert (target / "figure2.caption.txt").read_text().strip()
    assert _cells(run) == before
    assert not list(run.glob("figure2.*"))            # nothing drawn into the run itself
    # without a directory: into the run directory
    assert {p.parent for p in regenerate_figures(load_run(run))} == {run}


def test_nothing_is_drawn_for_a_run_without_cells_or_an_experiment_without_a_figure(tmp_path):
    empty = _figure2_run(tmp_path / "empty", cells=False)
    assert regenerate_figures(load_run(empty), tmp_path / "out") == []
    assert not (tmp_path / "out").exists()
    as_table1 = replace(load_run(_figure2_run(tmp_path / "f2")), kind="table1")
    assert as_table1.records and regenerate_figures(as_table1, tmp_path / "out") == []


@pytest.mark.slow
def test_redrawing_a_figure_never_imports_torch(tmp_path):
    run = _figure2_run(tmp_path / "figure2-quick")
    script = textwrap.dedent(f"""
        import sys
        from boundcalc.runs.stored import load_run
        from boundcalc.validators.experiments.figures import regenerate_figures
        drawn = regenerate_figures(load_run({str(run)!r}), {str(tmp_path / "out")!r})
        print(len(drawn), "torch" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, cwd=tempfile.gettempdir())   # the installed package
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3", "False"]
