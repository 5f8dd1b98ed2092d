"""``boundcalc reproduce``'s own parsing (the experiments are tested in tests/validators)."""

from __future__ import annotations

from pathlib import Path

import pytest

from boundcalc.cli.reproduce import parse_seeds
from boundcalc.errors import InputError


@pytest.mark.parametrize("text", ["-3", "0", "-", "1-", "a", "-1-3", "1e400"])
def test_a_bad_seeds_value_is_quoted_whole_in_the_error(text):
    with pytest.raises(InputError) as err:
        parse_seeds(text)
    assert err.value.flag == "--seeds"
    assert str(err.value).endswith(f", got {text!r}")


def test_seeds_take_a_count_a_range_or_a_list():
    assert parse_seeds(" 3 ") == 3
    assert parse_seeds("6-8") == [6, 7, 8]
    assert parse_seeds("0,4") == [0, 4]


def test_the_cli_quotes_a_negative_count(cli, tmp_path):
    run = cli("reproduce", "figure1", "--seeds", "-3", "--out", str(tmp_path / "run"))
    assert run.code == 2
    assert run.err.strip().endswith("got '-3'") and run.err.startswith("error: --seeds ")
    assert not (tmp_path / "run").exists()


TINY_SET = ["--set", "n=40", "--set", "steps=6", "--set", "teacher_width=64", "--set",
            "anchors=4", "--set", "T=4", "--set", "d=3"]


def test_set_overrides_run_those_cells_and_a_toml_file_gives_the_same_config(cli, tmp_path,
                                                                             monkeypatch):
    pytest.importorskip("torch")
    import json

    from boundcalc.validators.experiments import figure1

    import boundcalc

    monkeypatch.setattr(figure1, "plot_figure", lambda *a, **k: [])  # the figure: not tested here
    run = cli("reproduce", "figure1", "--preset", "quick", "--set", "widths=8,16,32", "--set",
              "seeds=2", *TINY_SET, "--device", "cpu", "--out", str(tmp_path / "R"))
    assert run.code == 0, run.err
    cells = sorted(p.stem for p in (tmp_path / "R" / "cells").glob("*.json"))
    assert cells == sorted(f"m{m}-seed{s}" for m in (8, 16, 32) for s in (1, 2))
    summary = boundcalc.load_run(tmp_path / "R").summary
    assert sorted(set(summary["m"])) == [8, 16, 32]
    toml = tmp_path / "mine.toml"
    toml.write_text("widths = [8, 16, 32]\nseeds = 2\nn = 40\nsteps = 6\nteacher_width = 64\n"
                    "anchors = 4\nT = 4\nd = 3\n")
    monkeypatch.setattr(figure1, "write_outputs", lambda *a, **k: [])  # config.json only
    run = cli("reproduce", "figure1", "--config", str(toml), "--device", "cpu", "--out",
              str(tmp_path / "R2"))
    assert run.code == 0, run.err

    def parameters(folder):
        return json.loads((tmp_path / folder / "config.json").read_text())["parameters"]

    assert parameters("R2") == parameters("R")
    assert parameters("R")["widths"] == [8, 16, 32] and parameters("R")["seeds"] == [1, 2]


@pytest.mark.parametrize(("args", "says"), [
    (["--set", "width=8"], "error: --set has no setting 'width'; the settings are widths, "),
    (["--set", "widths=8,x"], "error: --set widths must be a list of integers, got '8,x'"),
    (["--set", "steps=0"], "error: --set steps must be >= 1, got 0"),
    (["--set", "seeds=2", "--seeds", "3"], "error: --seeds and --set seeds are both given"),
    (["--set", "device=cuda"], "error: --set device is set by --device"),
])
def test_an_unknown_key_or_a_bad_value_exits_2_naming_it_before_the_run_directory(
        cli, tmp_path, args, says):
    pytest.importorskip("torch")
    run = cli("reproduce", "figure1", *args, "--out", str(tmp_path / "run"))
    assert run.code == 2
    assert run.err.startswith(says) and len(run.err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_a_malformed_set_or_config_exits_2_without_torch(cli, tmp_path):
    run = cli("reproduce", "figure1", "--set", "steps", "--out", str(tmp_path / "run"))
    assert run.code == 2 and run.err == "error: --set takes KEY=VALUE, got 'steps'\n"
    bad = tmp_path / "bad.toml"
    bad.write_text("steps = \n")
    run = cli("reproduce", "figure1", "--config", str(bad), "--out", str(tmp_path / "run"))
    assert run.code == 2 and run.err.startswith("error: --config ")
    assert "not valid TOML" in run.err and len(run.err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_figure_width_is_taken_by_every_experiment_with_a_figure_and_refused_for_table1(
        cli, tmp_path, monkeypatch):
    run = cli("reproduce", "table1", "--figure-width", "single", "--out", str(tmp_path / "t"))
    assert run.code == 2
    assert run.err == "error: --figure-width is for figure1, figure2 and tsweep, not table1\n"
    assert not (tmp_path / "t").exists()
    pytest.importorskip("torch")
    from boundcalc.validators.experiments import configure

    seen = {}
    monkeypatch.setattr(configure, "run_named",
                        lambda *a, **k: seen.update(k) or Path(k["out"]))
    run = cli("reproduce", "tsweep", "--figure-width", "single", "--out", str(tmp_path / "ts"))
    assert run.code == 0, run.err
    assert seen["figure_width"] == "single"
