"""The executor engine's bookkeeping (validators/experiments/engine.py): the missing cells of a
run directory, one group each with what its key says it holds, and tasks that pack whole groups.
"""

from __future__ import annotations

import math

import pytest
from boundcalc.validators.experiments.engine import _packed, missing_cells

from boundcalc.experiments.experiment_registry import experiment
from boundcalc.runs.directory import RunDirectory, dumps, with_parameters


def _figure2_cell(model: str, L: int, seed: int, **changes) -> dict:
    cell = {"model": model, "L": L, "T": L + 1, "seed": seed, "max_jacobian": 1.5,
            "min_val_loss": 0.7, "max_loss_gradient": 0.3, "diverged": False,
            "memory_floats_per_sample": 17}
    cell.update(changes)
    return cell


def test_missing_cells_are_those_not_soundly_stored_one_group_each(tmp_path, capsys):
    row = experiment("figure2")
    run = RunDirectory(tmp_path / "run", {"experiment": "figure2", "lags": [2, 4], "seeds": [0]})
    run.save_cell("transformer-L2-seed0", _figure2_cell("transformer", 2, 0))
    # a NaN where a finite number belongs, written as save_cell did before it refused one (a
    # file damaged or edited since)
    (run.path / "cells" / "indrnn-L2-seed0.json").write_text(dumps(with_parameters(
        _figure2_cell("indrnn", 2, 0, max_jacobian=math.nan), run.cell_parameters)))
    run.save_cell("indrnn-L4-seed0", _figure2_cell("indrnn", 4, 0))
    groups = missing_cells(row, run)
    assert groups == [
        [("indrnn-L2-seed0", {"model": "indrnn", "L": 2, "seed": 0})],      # damaged: NaN
        [("transformer-L4-seed0", {"model": "transformer", "L": 4, "seed": 0})],   # absent
    ]
    assert "damaged cell" in capsys.readouterr().err
    assert (run.cells / "corrupt").is_dir() and not (run.cells / "indrnn-L2-seed0.json").exists()
    for (key, identity), in groups:
        run.save_cell(key, _figure2_cell(identity["model"], identity["L"], identity["seed"]))
    assert missing_cells(row, run) == []


def test_a_cell_whose_fields_contradict_its_key_is_missing(tmp_path):
    row = experiment("figure2")
    run = RunDirectory(tmp_path / "run", {"experiment": "figure2", "lags": [4], "seeds": [1]})
    run.save_cell("transformer-L4-seed1", _figure2_cell("transformer", 2, 1))   # L = 2 inside
    run.save_cell("indrnn-L4-seed1", _figure2_cell("indrnn", 4, 1))
    assert [key for (key, _), in missing_cells(row, run)] == ["transformer-L4-seed1"]


@pytest.mark.parametrize(("sizes", "per_task", "tasks"), [
    ((1, 1, 1, 1, 1), 2, [2, 2, 1]),
    ((2, 2, 2), 3, [2, 2, 2]),          # a group is never split, so 2 + 2 > 3 goes apart
    ((1, 4, 1), 2, [1, 4, 1]),          # a group larger than a task goes alone
    ((3, 1, 1), 0, [3, 1, 1]),          # per_task below 1 counts as 1
    ((), 4, []),
])
def test_tasks_pack_whole_groups_up_to_the_cells_per_task(sizes, per_task, tasks):
    groups, n = [], 0
    for size in sizes:
        groups.append([(f"c{n + i}", i) for i in range(size)])
        n += size
    packed = _packed(groups, per_task)
    assert [len(t) for t in packed] == tasks
    assert [cell for task in packed for cell in task] == [c for g in groups for c in g]
    for group in groups:                # every group lies in exactly one task
        assert sum(all(c in task for c in group) for task in packed) == 1
