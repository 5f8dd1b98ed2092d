"""The experiments' field rows (:mod:`boundcalc.inputs.experiment_fields`): a row per field of
every experiment config (type, range, unit, meaning), the presets, and the rules over several
fields, which refuse (exit 2) or mark Theorem 1 not applicable."""

from __future__ import annotations

import pytest

from boundcalc.errors import InputError
from boundcalc.inputs.experiment_fields import (
    EXPERIMENT_INPUTS,
    FIGURE1,
    FIGURE2,
    TABLE1,
    TSWEEP,
    check_out,
    field_table,
)


def test_the_rules_over_several_fields_refuse_or_mark_not_applicable():
    quick = FIGURE1.preset("quick")
    assert [r.name for r in FIGURE1.failing({**quick, "rho": (3.0, 2.0, 3.0)})] == ["rho_ge_nu"]
    assert FIGURE1.failing({**quick, "delta": "0.05"}) == []
    with pytest.raises(InputError, match=r"^--set val_fraction leaves no training or no "
                                         r"validation sample"):
        FIGURE1.check("quick", {"val_fraction": "0.001"}, {"val_fraction": "--set"})
    with pytest.raises(InputError, match=r"^--set nu needs a positive component"):
        TSWEEP.check("quick", {"nu": "0"}, {"nu": "--set"})
    with pytest.raises(InputError, match=r"^--config Ns leaves too few generated images"):
        TABLE1.check("quick", {"Ns": [64, 4000]}, {"Ns": "--config"})
    # with --data, the generated pool is not used
    assert TABLE1.check("quick", {"Ns": [64, 4000]}, {"Ns": "--set"}, data="mnist") == (
        None, {"Ns": (64, 4000)})
    with pytest.raises(InputError, match=r"^--set val_fraction leaves no training"):
        FIGURE2.check("quick", {"val_fraction": "0.001"}, {"val_fraction": "--set"})


def test_every_field_has_a_type_range_unit_and_meaning():
    for name, inputs in EXPERIMENT_INPUTS.items():
        rows = field_table(inputs)
        assert [r["field"] for r in rows] == list(inputs.fields), name
        for row in rows:
            assert row["type"] and row["range"] and row["meaning"], (name, row)
        for preset in inputs.presets:
            values = inputs.preset(preset)
            if name == "table1" and preset == "paper":
                values["data"] = "mnist"  # the paper preset reads MNIST (--data)
            inputs.check_config(values)


def test_seeds_are_a_count_a_range_or_a_list_within_bounds():
    assert FIGURE1.check("quick", {"seeds": "3"}, {})[0] == 3
    assert FIGURE2.check("quick", {"seeds": [4, 9]}, {})[0] == [4, 9]
    with pytest.raises(InputError, match=r"^--set seeds takes at most 4096 seeds"):
        FIGURE1.check("quick", {"seeds": "5000"}, {"seeds": "--set"})
    with pytest.raises(InputError, match=r"^--set seeds must be seeds <= 4294967295"):
        FIGURE1.check("quick", {"seeds": f"{2**32},1"}, {"seeds": "--set"})


def test_check_out_keeps_a_folder_name():
    assert check_out("runs/x") == "runs/x" and check_out(None) is None
    with pytest.raises(InputError):
        check_out("a\x00b")
