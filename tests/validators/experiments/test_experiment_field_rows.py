"""The field rows of :mod:`boundcalc.inputs.experiment_fields` and the config dataclasses of the
experiments say the same: one row per field, in order, with the dataclass's type and default; the
presets are the rows' presets; the choices are what the validators accept; and a config the rows
refuse is refused by the dataclass's own check too (it is the same check)."""

from __future__ import annotations

import dataclasses
import importlib
import typing

import pytest

from boundcalc.errors import InputError
from boundcalc.inputs.experiment_fields import EXPERIMENT_INPUTS, FIGURE1, FIGURE2, TABLE1

pytestmark = pytest.mark.needs_torch

from boundcalc.validators.experiments.configure import config_class  # noqa: E402


@pytest.mark.parametrize("name", sorted(EXPERIMENT_INPUTS))
def test_every_dataclass_field_has_one_row_with_its_type_and_default(name):
    cls = config_class(name)
    rows = EXPERIMENT_INPUTS[name].fields
    hints = typing.get_type_hints(cls)
    assert [f.name for f in dataclasses.fields(cls)] == list(rows)
    default = cls()
    for f in dataclasses.fields(cls):
        assert rows[f.name].type == hints[f.name], f.name
        assert rows[f.name].default == getattr(default, f.name), f.name


@pytest.mark.parametrize("name", sorted(EXPERIMENT_INPUTS))
def test_the_presets_are_the_rows_presets(name):
    module = importlib.import_module(config_class(name).__module__)
    inputs = EXPERIMENT_INPUTS[name]
    assert sorted(module.PRESETS) == sorted(inputs.presets)
    for preset, config in module.PRESETS.items():
        assert dataclasses.asdict(config) == inputs.preset(preset), preset


def test_the_choices_are_what_the_validators_accept():
    from boundcalc.validators.data.mnist import SCALES
    from boundcalc.validators.indrnn import DEFAULT_ALPHA
    from boundcalc.validators.model import ACTIVATIONS

    assert set(FIGURE1.fields["activation"].choices) == set(ACTIVATIONS)
    assert set(FIGURE2.fields["activation"].choices) == set(ACTIVATIONS)
    assert TABLE1.fields["scale"].choices == tuple(SCALES)
    assert FIGURE2.fields["alpha"].default == DEFAULT_ALPHA


@pytest.mark.parametrize(("name", "fields", "says"), [
    ("figure1", {"nu": (-1.0, -1.0, -1.0)}, "`nu` must be one or three non-negative numbers"),
    ("figure1", {"val_fraction": 0.0}, "`val_fraction` must be a number in (0, 1)"),
    ("figure2", {"burn_in": -5}, "`burn_in` must be >= 0"),
    ("tsweep", {"Ts": (4,)}, "`Ts` must be at least two distinct integers >= 1"),
])
def test_the_dataclass_check_is_the_rows_check(name, fields, says):
    module = importlib.import_module(config_class(name).__module__)
    with pytest.raises(InputError) as err:
        module.make_config("quick", **fields)
    assert str(err.value).startswith(says)
