"""What a flag needs of this machine (:mod:`boundcalc.inputs.environment`): a missing module,
GPU, command or setting is one line naming the flag that asked for it and what to install, and
the CLI exits 2 before any run directory is made. Modules are hidden with monkeypatch (on
``importlib.util.find_spec`` or ``sys.modules``); nothing is uninstalled."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from boundcalc.errors import InputError
from boundcalc.inputs.environment import (
    require_commands,
    require_gpu,
    require_module,
    require_modules,
    require_setting,
)


def _hide(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """``importlib.util.find_spec`` answers None for ``names`` (as for a module not installed)."""
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        if name.split(".")[0] in names:
            return None
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def _one_line(call) -> InputError:
    with pytest.raises(InputError) as info:
        call()
    assert "\n" not in str(info.value)
    return info.value


def test_an_installed_module_passes():
    require_module("--format", "json", "writes", "nothing to install")
    require_module("--format", "json", "writes", "nothing to install", import_it=True)


def test_a_missing_module_is_named_with_its_flag_and_install(monkeypatch):
    _hide(monkeypatch, "torch")
    error = _one_line(lambda: require_module("STATEMENT", "torch", "validate measures",
                                             "pip install 'boundcalc[validators]'"))
    assert error.flag == "STATEMENT"
    assert str(error) == ("STATEMENT validate measures with torch, which is not installed: "
                          "pip install 'boundcalc[validators]'")


def test_a_module_set_to_none_counts_as_not_installed(monkeypatch):
    """``sys.modules[name] = None`` (a blocked import) makes ``find_spec`` raise: not found."""
    monkeypatch.setitem(sys.modules, "json", None)
    assert "json" in str(_one_line(lambda: require_module("--x", "json", "needs", "fix it")))


def test_a_find_spec_that_raises_counts_as_not_installed(monkeypatch):
    def broken(name, *args, **kwargs):
        raise ValueError(f"{name}.__spec__ is None")

    monkeypatch.setattr(importlib.util, "find_spec", broken)
    assert "numpy" in str(_one_line(lambda: require_module("--x", "numpy", "needs", "fix it")))


def test_import_it_counts_a_broken_install_as_none(monkeypatch):
    """A module that is found but fails on import is refused only when ``import_it`` (looking
    for it alone cannot tell)."""
    real = importlib.import_module

    def import_module(name, *args, **kwargs):
        if name == "json":
            raise ImportError("broken install")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", import_module)
    require_module("--format", "json", "writes", "fix it")
    error = _one_line(lambda: require_module("--format", "json", "writes", "fix it",
                                             import_it=True))
    assert str(error).startswith("--format writes with json, which is not installed")


def test_the_missing_modules_are_listed_and_none_passes():
    require_modules("--executor", [], "dask", "pip install dask")
    error = _one_line(lambda: require_modules("--executor", ["dask", "distributed"], "dask",
                                              "pip install 'boundcalc[dask]'"))
    assert str(error) == ("--executor dask needs dask, distributed, which is not installed: "
                          "pip install 'boundcalc[dask]'")
    assert str(_one_line(lambda: require_modules("--dask-dashboard", ["bokeh"], "",
                                                 "pip install bokeh"))).startswith(
        "--dask-dashboard needs bokeh")


@pytest.mark.parametrize("device", ["cuda", "cuda:1", "auto"])
def test_a_gpu_device_without_a_gpu_is_refused_naming_device(device):
    error = _one_line(lambda: require_gpu(device, False))
    assert error.flag == "--device" and repr(device) in str(error)
    require_gpu(device, True)
    require_gpu("cpu", False)


def test_missing_commands_are_named_with_the_right_verb():
    require_commands("--executor", [], "slurm", "Slurm's", "x")
    one = _one_line(lambda: require_commands("--executor", ["sbatch"], "slurm", "Slurm's",
                                             "run it on the cluster"))
    two = _one_line(lambda: require_commands("--executor", ["sbatch", "squeue"], "slurm",
                                             "Slurm's", "run it on the cluster"))
    assert "sbatch, which is not found on PATH: run it on the cluster" in str(one)
    assert "sbatch and squeue, which are not found on PATH" in str(two)


def test_a_setting_outside_its_values_is_refused_naming_them():
    assert require_setting("--executor", "X", "b", ("a", "b", "c"), "slurm") == "b"
    error = _one_line(lambda: require_setting("--executor", "X", "d", ("a", "b", "c"), "slurm"))
    assert str(error) == "--executor slurm: X must be a, b or c, got 'd'"


def test_validate_without_torch_exits_2_before_any_run_directory(monkeypatch, tmp_path, cli):
    _hide(monkeypatch, "torch")
    run_dir = tmp_path / "run"
    run = cli("validate", "lemma2", "--device", "cpu", "--quiet", "--out", str(run_dir))
    assert run.code == 2, run.err
    assert run.err.startswith("error: STATEMENT ") and "torch" in run.err
    assert len(run.err.strip().splitlines()) == 1 and "Traceback" not in run.err
    assert not run_dir.exists()
