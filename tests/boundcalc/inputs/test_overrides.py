"""Overrides of a config dataclass: ``--set KEY=VALUE`` texts and TOML values, typed from the
dataclass, every problem one InputError naming the option and the key."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from boundcalc.errors import InputError
from boundcalc.inputs.overrides import (
    convert,
    parse_assignments,
    parse_seeds,
    read_config_file,
    typed_overrides,
)


@dataclass(frozen=True)
class Settings:
    widths: tuple[int, ...] = (8, 16)
    seeds: tuple[int, ...] = (1, 2)
    steps: int = 100
    lr: float = 0.1
    rho: tuple[float, float, float] = (3.0, 3.0, 3.0)
    digits: tuple[int, int] = (0, 1)
    activation: str = "tanh"
    delta: str = "0.05"
    n_test: int | None = None
    fused: bool = True
    device: str = "cpu"


SET = {"widths": "--set", "steps": "--set", "rho": "--set", "n_test": "--set", "lr": "--set",
       "delta": "--set", "fused": "--set", "digits": "--set", "activation": "--set"}


def test_texts_and_toml_values_that_mean_the_same_give_the_same_settings(tmp_path):
    texts = parse_assignments(["widths=8,16,32", "steps=1e3", "rho=2", "n_test=none",
                               "lr=0.05", "delta=0.01", "fused=false", "digits=3,7",
                               "activation=erf"])
    file = tmp_path / "run.toml"
    file.write_text('widths = [8, 16, 32]\nsteps = 1000\nrho = [2, 2, 2]\nn_test = "none"\n'
                    'lr = 0.05\ndelta = 0.01\nfused = false\ndigits = [3, 7]\n'
                    'activation = "erf"\n')
    from_toml = read_config_file(file)
    expected = {"widths": (8, 16, 32), "steps": 1000, "rho": (2.0, 2.0, 2.0), "n_test": None,
                "lr": 0.05, "delta": "0.01", "fused": False, "digits": (3, 7),
                "activation": "erf"}
    assert typed_overrides(Settings, texts, SET) == expected
    assert typed_overrides(Settings, from_toml, dict.fromkeys(from_toml, "--config")) == expected


@pytest.mark.parametrize(("key", "value", "says"), [
    ("widths", "8,x", "must be a list of integers, got '8,x'"),
    ("widths", "", "must be a list of integers, got ''"),
    ("steps", "1.5", "must be an integer, got '1.5'"),
    ("steps", True, "must be an integer, got True"),
    ("lr", "fast", "must be a number, got 'fast'"),
    ("lr", "inf", "must be a finite number, got 'inf'"),
    ("rho", "1,2", "must be 3 numbers (or one for all), got '1,2'"),
    ("digits", "1", "must be 2 integers, got '1'"),
    ("fused", "maybe", "must be true or false, got 'maybe'"),
    ("activation", [1], "must be a text, got [1]"),
])
def test_a_bad_value_names_the_option_and_the_key(key, value, says):
    with pytest.raises(InputError) as err:
        typed_overrides(Settings, {key: value}, {key: "--config"})
    assert err.value.flag == f"--config {key}"
    assert str(err.value) == f"--config {key} {says}"


def test_an_unknown_key_lists_the_settings_and_an_own_option_key_names_its_option():
    with pytest.raises(InputError) as err:
        typed_overrides(Settings, {"width": "8"}, {"width": "--set"}, {"device": "by --device"})
    assert err.value.flag == "--set" and "'width'" in str(err.value)
    assert "widths, seeds, steps" in str(err.value) and "device" not in str(err.value)
    with pytest.raises(InputError, match=r"^--set device by --device$"):
        typed_overrides(Settings, {"device": "cuda"}, {"device": "--set"},
                        {"device": "by --device"})


@pytest.mark.parametrize("item", ["steps", "=3", ""])
def test_an_assignment_without_key_and_value_is_refused(item):
    with pytest.raises(InputError, match=r"^--set takes KEY=VALUE"):
        parse_assignments([item])


def test_a_key_set_twice_is_refused():
    with pytest.raises(InputError, match=r"^--set steps is given twice$"):
        parse_assignments(["steps=1", "steps=2"])


def test_a_missing_invalid_or_nested_toml_file_is_one_error_naming_config(tmp_path):
    with pytest.raises(InputError, match=r"^--config cannot read"):
        read_config_file(tmp_path / "absent.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("widths = [8,\n")
    with pytest.raises(InputError) as err:
        read_config_file(bad)
    assert str(err.value).startswith("--config ") and "not valid TOML" in str(err.value)
    assert "\n" not in str(err.value)
    nested = tmp_path / "nested.toml"
    nested.write_text("[figure1]\nsteps = 3\n")
    with pytest.raises(InputError, match=r"^--config figure1 must be a value, not a table"):
        read_config_file(nested)


def test_seeds_are_a_count_a_range_or_a_list_in_text_or_as_values():
    assert parse_seeds("3") == 3 and parse_seeds(3) == 3
    assert parse_seeds("6-8") == [6, 7, 8] and parse_seeds("5,") == [5]
    assert parse_seeds([0, 4]) == [0, 4] and parse_seeds(range(2)) == [0, 1]
    for bad in ("0", [1, 1], [-1], True, 2.5):
        with pytest.raises(InputError, match=r"^--set seeds "):
            parse_seeds(bad, flag="--set seeds")


def test_a_type_that_cannot_be_set_is_named():
    with pytest.raises(InputError, match="cannot be set"):
        convert("--set x", dict, "1")
