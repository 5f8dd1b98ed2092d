"""The overrides of each experiment's config (``reproduce --set/--config``): typed from the
config dataclass, checked by the experiment's own checks, errors naming the option and key."""

from __future__ import annotations

import pytest

from boundcalc.errors import InputError

pytestmark = pytest.mark.needs_torch

from boundcalc.validators.experiments.configure import (  # noqa: E402
    configs,
    resolve_overrides,
    settings_help,
)
from boundcalc.validators.experiments.figure1 import make_config  # noqa: E402


def test_seeds_as_a_count_keep_each_experiments_numbering():
    seeds, fields = resolve_overrides("figure1", "quick", {"seeds": "2"}, {"seeds": "--set"})
    assert seeds == 2 and fields == {}
    assert make_config("quick", seeds).seeds == (1, 2)
    seeds, _ = resolve_overrides("figure2", "quick", {"seeds": 3}, {"seeds": "--config"})
    from boundcalc.validators.experiments.figure2 import make_config as figure2_config

    assert figure2_config("quick", seeds).seeds == (0, 1, 2)
    assert resolve_overrides("tsweep", "quick", {"seeds": [4, 9]}, {})[0] == [4, 9]


def test_every_field_but_device_and_data_can_be_set_for_every_experiment():
    import dataclasses

    for name, cls in configs().items():
        names = [f.name for f in dataclasses.fields(cls)]
        assert settings_help(name).split(", ") == [n for n in names if n not in ("device",
                                                                                  "data")]


def test_a_value_the_experiment_refuses_names_the_option_and_key():
    with pytest.raises(InputError) as err:
        resolve_overrides("figure1", "quick", {"widths": "8,9"}, {"widths": "--set"})
    assert str(err.value) == "--set widths must be positive even integers, got (8, 9)"
    with pytest.raises(InputError) as err:
        resolve_overrides("table1", "quick", {"steps": 0}, {"steps": "--config"})
    assert str(err.value) == "--config steps must be >= 1, got 0"
    with pytest.raises(InputError, match=r"^--set delta must be a number in \(0, 1\)"):
        resolve_overrides("tsweep", "quick", {"delta": "x"}, {"delta": "--set"})
    with pytest.raises(InputError, match=r"^--set has no setting 'width'; the settings are lags"):
        resolve_overrides("figure2", "quick", {"width": "8"}, {"width": "--set"})


def test_the_step_size_recorded_as_eta_points_at_the_settings_that_make_it():
    with pytest.raises(InputError, match=r"^--set eta is not a setting: .* set step_constant"):
        resolve_overrides("figure1", "quick", {"eta": "0.1"}, {"eta": "--set"})
