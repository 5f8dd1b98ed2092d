"""The experiment registry: one row per experiment, read by ``reproduce``, ``table``, the run
directories, the summaries, the figures and the engines. A toy experiment added the documented
way (one module and one registered row, docs/architecture.md) in a fresh process runs, resumes,
is tabled and loaded; and no module outside the registry dispatches on an experiment's name."""

from __future__ import annotations

import ast
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from boundcalc.experiments.experiment_registry import (
    EXPERIMENTS,
    Experiment,
    experiment,
    listed,
    load,
    names,
    register_experiment,
    with_option,
)
from boundcalc.inputs.params import InputError

#: The toy experiment's module, written beside the runner (cells y = scale·x² + seed).
_TOY_MODULE = '''
import dataclasses
import os

from boundcalc.experiments.experiment_registry import Experiment, register_experiment


@dataclasses.dataclass(frozen=True)
class ToyConfig:
    xs: tuple = (1, 2, 3)
    seeds: tuple = (0, 1)
    scale: float = 1.0
    device: str = "cpu"


PRESETS = {"quick": ToyConfig(), "paper": ToyConfig(xs=(1, 2, 3, 4), seeds=(0, 1, 2))}


def make_config(preset, seeds=None, device="cpu", **fields):
    cfg = dataclasses.replace(PRESETS[preset], device=device, **fields)
    if seeds is not None:
        chosen = range(seeds) if isinstance(seeds, int) else seeds
        cfg = dataclasses.replace(cfg, seeds=tuple(chosen))
    if cfg.scale <= 0:
        raise ValueError(f"`scale` must be > 0, got {cfg.scale}")
    return cfg


def cells(params):
    return [f"x{int(x)}-seed{int(s)}" for s in params["seeds"] for x in params["xs"]]


def task(cells, context):
    scale = context["config"]["scale"]
    for key, cell in cells:
        x, seed = cell["x"], cell["seed"]
        yield key, {"x": x, "seed": seed, "y": scale * x * x + seed, "pid": os.getpid()}


def summarize(run):
    from boundcalc.runs.stats import mean_ci95

    rows = []
    for x in run.params["xs"]:
        mean, ci, k = mean_ci95([r["y"] for r in run.records if r["x"] == x])
        if k:
            rows.append({"x": x, "y_mean": mean, "y_ci95": ci, "seeds": k})
    return rows


def tables(parts):
    from boundcalc.runs.tables import Column, Table

    rows = [{"run": label, **row} for label, summary, _ in parts for row in summary]
    columns = [Column("x", "x", "$x$"), Column("y_mean", "y", "$y$", ci="y_ci95"),
               Column("seeds", "seeds", "seeds")]
    return [Table("toy", "toy", "Toy: {statistic} of y per x", columns, rows, len(parts))]


def write_outputs(run, cfg, **drawing):
    from boundcalc.runs.stored import load_run

    stored = load_run(run.path)
    run.write_results(stored.records)
    run.write_results(summarize(stored), stem="summary")


register_experiment(Experiment(
    name="toy", label="the toy experiment", cells=cells,
    cell_pattern=r"x(?P<x>\\d+)-seed(?P<seed>\\d+)", cell_fields=("x", "seed", "y"),
    finite_fields=("y",), group_columns=("x",), summarize=summarize, tables=tables,
    config=ToyConfig, make_config=make_config, write_outputs=write_outputs, task=task,
    needs_torch=False))
'''

#: Runs each command of the JSON list ``sys.argv[1]`` (an argv of ``boundcalc``, or ``["api",
#: RUN_DIR]`` for ``boundcalc.load_run``) in this one process, after importing the toy module.
_RUNNER = '''
import contextlib, io, json, os, sys
import toy_experiment  # noqa: F401  (registers the toy experiment)
from boundcalc.cli import main


def run(commands):
    results = []
    for argv in commands:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            if argv[0] == "api":
                import boundcalc
                print(boundcalc.load_run(argv[1]).summary.to_csv(index=False), end="")
                code = 0
            else:
                code = main(argv)
        results.append({"code": code, "out": out.getvalue(), "err": err.getvalue()})
    return results


if __name__ == "__main__":   # (worker processes import this file too)
    results = run(json.loads(sys.argv[1]))
    print(json.dumps({"pid": os.getpid(), "torch": "torch" in sys.modules, "results": results}))
'''


def _toy(tmp_path: Path, *commands: list[str], env: dict[str, str] | None = None
         ) -> tuple[int, list[dict]]:
    """The commands run in a fresh process in ``tmp_path`` with the toy experiment registered
    (``reproduce`` with ``--device cpu``): the process id and each command's exit code, stdout
    and stderr. The toy uses no torch, and nothing on its way loads it."""
    commands = tuple([*c, "--device", "cpu"] if c[0] == "reproduce" else c for c in commands)
    (tmp_path / "toy_experiment.py").write_text(_TOY_MODULE)
    (tmp_path / "runner.py").write_text(_RUNNER)
    proc = subprocess.run([sys.executable, "runner.py", json.dumps(list(commands))],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout.splitlines()[-1])
    assert not data["torch"]
    return data["pid"], data["results"]


def _cells(folder: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((folder / "cells").glob("*.json"))}


def test_a_toy_experiment_registered_at_run_time_is_reproduced_in_process_tabled_and_loaded(
        tmp_path):
    pid, (first, again, table, api) = _toy(
        tmp_path, ["reproduce", "toy", "--out", "R"], ["reproduce", "toy", "--out", "R"],
        ["table", "R", "--format", "csv"], ["api", "R"])
    assert first["code"] == 0, first["err"]
    assert first["out"] == "the toy experiment (quick) written to R\n"
    cells = _cells(tmp_path / "R")
    assert sorted(cells) == ["x1-seed0", "x1-seed1", "x2-seed0", "x2-seed1", "x3-seed0",
                             "x3-seed1"]
    assert {c["pid"] for c in cells.values()} == {pid}   # --jobs 1: computed in this process
    assert cells["x3-seed1"]["y"] == 10.0
    assert again["code"] == 0 and "[toy] 0 cells computed" in again["err"]   # resumed: none
    assert table["code"] == 0, table["err"]
    rows = list(csv.DictReader(io.StringIO(table["out"])))
    assert list(rows[0]) == ["run", "x", "y_mean", "y_ci95", "seeds"]
    assert [(r["x"], float(r["y_mean"]), r["seeds"]) for r in rows] == [
        ("1", 1.5, "2"), ("2", 4.5, "2"), ("3", 9.5, "2")]
    # two seeds a unit apart: t(0.975, 1) · (1/√2) / √2 = 12.7062… / 2
    assert float(rows[0]["y_ci95"]) == pytest.approx(6.3531, abs=1e-4)
    assert api["code"] == 0, api["err"]
    tidy = list(csv.DictReader(io.StringIO(api["out"])))
    assert (tidy[0]["quantity"], tidy[0]["x"], float(tidy[0]["mean"])) == ("y", "1", 1.5)
    summary = json.loads((tmp_path / "R" / "summary.json").read_text())
    assert [row["y_mean"] for row in summary] == [1.5, 4.5, 9.5]


def test_the_toy_experiment_runs_on_worker_processes_and_on_an_engine_with_the_same_cells(
        tmp_path):
    pytest.importorskip("submitit")  # the engine: the slurm extra (the lowest-pins step lacks it)
    pid, (pool, engine) = _toy(
        tmp_path, ["reproduce", "toy", "--out", "P", "--jobs", "2", "--set", "scale=2"],
        ["reproduce", "toy", "--out", "S", "--set", "scale=2", "--executor", "slurm"],
        env={"BOUNDCALC_SLURM_CLUSTER": "debug"})
    assert pool["code"] == 0, pool["err"]
    assert engine["code"] == 0, engine["err"]
    pooled, on_engine = _cells(tmp_path / "P"), _cells(tmp_path / "S")
    assert pid not in {c["pid"] for c in pooled.values()}   # --jobs 2: worker processes
    drop = ("pid", "parameters")
    assert ({k: {f: v for f, v in c.items() if f not in drop} for k, c in pooled.items()}
            == {k: {f: v for f, v in c.items() if f not in drop} for k, c in on_engine.items()})
    assert pooled["x2-seed1"]["y"] == 9.0
    config = json.loads((tmp_path / "S" / "config.json").read_text())
    assert config["parameters"]["experiment"] == "toy"
    assert config["parameters"]["scale"] == 2.0


def test_the_toy_experiment_s_bad_input_exits_2_naming_the_option(tmp_path):
    _, results = _toy(
        tmp_path, ["reproduce", "toy", "--set", "scale=0"],
        ["reproduce", "toy", "--set", "nosuch=1"],
        ["reproduce", "toy", "--figure-width", "single"],
        ["reproduce", "toy", "--lin-align", "output"],
        ["reproduce", "toy", "--preset", "huge"])
    assert [r["code"] for r in results] == [2, 2, 2, 2, 2]
    errors = [r["err"].strip().splitlines()[-1] for r in results]
    assert errors[0] == "error: --set scale must be > 0, got 0.0"
    assert errors[1] == ("error: --set has no setting 'nosuch'; the settings are xs, seeds, "
                         "scale")
    assert errors[2] == "error: --figure-width is for figure1, figure2 and tsweep, not toy"
    assert errors[3] == "error: --lin-align is for figure1 and tsweep only, not toy"
    assert errors[4] == "error: --preset must be quick or paper, got 'huge'"
    assert not list(tmp_path.glob("runs/*/cells/*.json"))


def test_a_row_is_registered_once_and_named_in_the_errors_and_option_lists():
    row = experiment("figure1")
    with pytest.raises(ValueError, match="registered already"):
        register_experiment(row)
    with pytest.raises(ValueError, match="unknown options"):
        register_experiment(Experiment(**{**row.__dict__, "name": "other",
                                          "options": frozenset({"colour"})}))
    assert "other" not in EXPERIMENTS
    with pytest.raises(InputError, match="^EXPERIMENT must be figure1, figure2, table1 or "
                                         "tsweep, got 'figure3'"):
        experiment("figure3")
    assert with_option("data") == ("table1",)
    assert listed(with_option("seeds")) == "figure1, figure2 and tsweep"
    assert names() == ("figure1", "figure2", "table1", "tsweep")


def test_every_row_names_loadable_torch_free_table_and_summary_functions_and_matching_cells():
    for row in EXPERIMENTS.values():
        for ref in (row.summarize, row.tables, row.slopes):
            assert ref is None or callable(load(ref)), (row.name, ref)
        for ref in (row.config, row.make_config, row.write_outputs, row.task, row.run,
                    row.figure, row.groups, row.stored_config, row.describe):
            assert ref is None or (isinstance(ref, str) and ":" in ref), (row.name, ref)
    params = {"seeds": [1, 2], "widths": [8], "lags": [4], "dms": [16], "Ns": [64],
              "Ts": [4, 8]}
    for row in EXPERIMENTS.values():
        keys = row.cell_keys(params)
        assert keys and all(row.is_cell_key(k) for k in keys), row.name
        assert all(not other.is_cell_key(k) for other in EXPERIMENTS.values()
                   if other is not row for k in keys), row.name


_NAMES = {"figure1", "figure2", "tsweep", "table1"}


def _dispatch_on_names(tree: ast.AST) -> list[tuple[int, str]]:
    """Comparisons with an experiment's name (``kind == "figure1"``, ``name in ("table1",
    …)``), dict literals keyed by names and subscripts by a name (``X["tsweep"]``)."""
    found = []

    def named(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in _NAMES
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(named(e) for e in node.elts)
        return False

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(named(c) for c in [node.left,
                                                                    *node.comparators]):
            found.append((node.lineno, "comparison"))
        elif isinstance(node, ast.Dict) and any(k is not None and named(k) for k in node.keys):
            found.append((node.lineno, "dict keyed by names"))
        elif isinstance(node, ast.Subscript) and named(node.slice):
            found.append((node.lineno, "subscript by a name"))
    return found


def test_no_module_outside_the_registry_dispatches_on_an_experiment_name():
    root = Path(__file__).resolve().parents[3]
    hits = []
    for folder in ("boundcalc", "validators"):
        for path in sorted((root / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if path.name == "experiment_registry.py" or not any(n in text for n in _NAMES):
                continue
            for line, what in _dispatch_on_names(ast.parse(text)):
                hits.append(f"{path.relative_to(root)}:{line}: {what}")
    assert hits == []
    # the scan finds what it looks for
    sample = 'if kind == "table1": pass\nx = {"figure1": 1}\ny = W["tsweep"]\nz = k in ("figure2",)'
    assert [what for _, what in _dispatch_on_names(ast.parse(sample))] == [
        "comparison", "dict keyed by names", "subscript by a name", "comparison"]
