"""The flags that exclude or need each other (:data:`COMBINATIONS`): each row refuses exactly
the combination it names, with a one-line message naming its flag, and lets the allowed
combinations through."""

from __future__ import annotations

import pytest

from boundcalc.errors import InputError
from boundcalc.inputs.combinations import COMBINATIONS, SLURM_FLAGS, check_combinations

#: (surface, values, the flag the error names, a word of its message) for every refused
#: combination.
REFUSED = [
    ("point", {"symbolic": True, "fmt": "json"}, "--symbolic", "--format json"),
    ("point", {"symbolic": True, "fmt": "csv"}, "--symbolic", "--format csv"),
    ("point", {"symbolic": True, "fmt": "table", "other_alpha": 2, "alpha": 2}, "--symbolic",
     "--alpha 2"),
    ("width", {"nonvacuous": True, "target": 0.1}, "--nonvacuous", "--target"),
    ("width", {"nonvacuous": False, "target": None}, "--target", "--nonvacuous"),
    ("python", {"alpha": 2, "statement": "theorem1"}, "alpha", "theorem1"),
    ("sweep", {"alpha": 2, "statement": "lemma2"}, "--alpha", "lemma2"),
    ("generalization", {"symbolic": True, "fmt": "csv"}, "--symbolic", "csv"),
    ("generalization", {"symbolic": True, "fmt": "json", "needs_numbers": True}, "--symbolic",
     "data contract"),
    ("generalization", {"data": "x.npz", "N": 100}, "--N", "--data"),
    ("generalization", {"data": "x.npz", "wq_fro": 1.0}, "--wq-fro", "--data"),
    ("validate", {"executor": "processes", "jobs": 4}, "--jobs", "dask"),
    ("validate", {"decompose": True, "executor": "dask"}, "--executor", "--decompose"),
    ("executor", {"kind": "mpi"}, "--executor", "'mpi'"),
    ("executor", {"kind": "dask", "jobs": 0}, "--jobs", ">= 1"),
    ("executor", {"kind": "dask", "cells_per_task": 0}, "--cells-per-task", ">= 1"),
    ("executor", {"kind": "dask", "slurm_time": "1:00:00"}, "--slurm-time", "dask"),
    ("executor", {"kind": "processes", "slurm_partition": "gpu"}, "--slurm-partition",
     "processes"),
    ("executor", {"kind": "processes", "dask_address": "tcp://h:8786"}, "--dask-address",
     "processes"),
    ("executor", {"kind": "slurm", "dask_dashboard": True}, "--dask-dashboard", "slurm"),
    ("executor", {"kind": "processes", "cells_per_task": 4}, "--cells-per-task", "slurm"),
    ("executor", {"kind": "slurm", "slurm_gpus_per_task": -1}, "--slurm-gpus-per-task",
     ">= 0"),
    ("executor", {"kind": "slurm", "slurm_cpus_per_task": 0}, "--slurm-cpus-per-task", ">= 1"),
    ("executor", {"kind": "slurm", "slurm_array_parallelism": 0},
     "--slurm-array-parallelism", ">= 1"),
]

#: Combinations every surface lets through.
ALLOWED = [
    ("point", {"symbolic": True, "fmt": "table"}),
    ("point", {"symbolic": True, "fmt": "latex"}),
    ("point", {"symbolic": False, "fmt": "json", "other_alpha": 2, "alpha": 2}),
    ("width", {"nonvacuous": True, "target": None}),
    ("width", {"nonvacuous": False, "target": 0.1}),
    ("python", {"alpha": 2, "statement": "prop2"}),
    ("python", {"alpha": None, "statement": "theorem1"}),
    ("sweep", {"alpha": "1,2", "statement": "prop2"}),
    ("generalization", {"symbolic": True, "fmt": "json", "needs_numbers": False}),
    ("generalization", {"symbolic": False, "fmt": "csv"}),
    ("generalization", {"data": "x.npz", "N": None, "alpha": None}),
    ("generalization", {"data": None, "N": 100, "wq_fro": 1.0}),
    ("validate", {"executor": "processes", "jobs": 1}),
    ("validate", {"executor": "dask", "jobs": 8}),
    ("validate", {"decompose": True, "executor": "processes"}),
    ("executor", {"kind": "processes"}),
    ("executor", {"kind": "dask", "jobs": 4, "cells_per_task": 8,
                  "dask_address": "tcp://h:8786", "dask_dashboard": True}),
    ("executor", {"kind": "slurm", "cells_per_task": 8, "slurm_time": "1:00:00",
                  "slurm_partition": "gpu", "slurm_gpus_per_task": 0,
                  "slurm_cpus_per_task": 1, "slurm_array_parallelism": 1,
                  "slurm_setup": "module load cuda"}),
    ("executor", {"kind": "processes", "slurm_setup": None, "slurm_partition": None,
                  "dask_dashboard": False}),
]


@pytest.mark.parametrize(("surface", "values", "flag", "word"), REFUSED)
def test_each_refused_combination_names_its_flag_in_one_line(surface, values, flag, word):
    with pytest.raises(InputError) as info:
        check_combinations(surface, values)
    message = str(info.value)
    assert info.value.flag == flag
    assert message.startswith(flag + " ") and word in message, message
    assert "\n" not in message and "{" not in message


@pytest.mark.parametrize(("surface", "values"), ALLOWED)
def test_allowed_combinations_pass(surface, values):
    assert check_combinations(surface, values) is None


def test_every_row_is_exercised_by_a_refused_case():
    """Each row of the table refuses at least one listed case, and no case is refused by a row
    of another surface: the lists above cover the table."""
    hit = set()
    for surface, values, _, _ in REFUSED:
        first = next(i for i, row in enumerate(COMBINATIONS)
                     if row.surface == surface and row.refused(values))
        hit.add(first)
    assert hit == set(range(len(COMBINATIONS)))


def test_a_row_of_one_surface_does_not_refuse_on_another():
    """``--symbolic`` with JSON is refused for ``point`` but the same values mean nothing to the
    ``width`` rows (which need ``target`` or ``nonvacuous``) beyond their own rule."""
    check_combinations("validate", {"symbolic": True, "fmt": "json", "executor": "processes"})
    check_combinations("executor", {"kind": "processes", "symbolic": True, "fmt": "json"})


def test_the_first_applying_row_wins():
    """With several wrong flags the error names the first row's flag, so the message does not
    depend on dict order."""
    with pytest.raises(InputError) as info:
        check_combinations("executor", {"kind": "processes", "jobs": 0, "slurm_time": "1"})
    assert info.value.flag == "--jobs"


def test_every_slurm_flag_is_refused_without_the_slurm_executor():
    for key, flag in SLURM_FLAGS.items():
        for kind in ("processes", "dask"):
            with pytest.raises(InputError) as info:
                check_combinations("executor", {"kind": kind, key: "x"})
            assert info.value.flag == flag and kind in str(info.value)
