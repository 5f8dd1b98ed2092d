"""Property test (hypothesis) over hostile experiment overrides: random and hostile keys and values
through ``reproduce --set``, through ``--config`` TOML files and through
:func:`boundcalc.reproduce`, for every experiment and preset. Whatever the input:

* the CLI exits 0 or 2 (never 3), with no traceback and no "internal error"; exit 2 is one stderr
  line naming an option, and leaves no run directory behind;
* the API raises :class:`~boundcalc.errors.InputError` or nothing;
* what is accepted is a config the experiment itself accepts (its ``make_config``, where torch is
  installed): the one check up front is complete.

No experiment runs: where the overrides are accepted, the run itself (``run_named``) is replaced by
a stub that records what it was given.
"""

from __future__ import annotations

import importlib.util
import io
import itertools
import json
import math
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import boundcalc
from boundcalc import experiment_api
from boundcalc.cli import main
from boundcalc.errors import InputError
from boundcalc.experiments.experiment_registry import experiment, load, names
from boundcalc.inputs.experiment_fields import EXPERIMENT_INPUTS

pytestmark = pytest.mark.slow

HAS_TORCH = importlib.util.find_spec("torch") is not None
FIELDS = sorted({k for inputs in EXPERIMENT_INPUTS.values() for k in inputs.fields})
KEY = st.one_of(st.sampled_from(FIELDS), st.sampled_from(FIELDS),
                st.sampled_from(["", " ", "eta", "x", "seeds", "__class__", "widths ", "ts",
                                 "device", "data", "k" * 300, "n=1", "ρ"]),
                st.text(max_size=6))
HOSTILE = ["-1", "0", "-0", "nan", "inf", "-inf", "1e400", "1e-400", "1e300", "", " ", ",", "1,",
           "0x10", "1e", "none", "true", "8,16", "2,3,1", "1,2", "0.5", "0.999", "4,4", "3-1",
           "1-3", "9" * 30, str(2**24), str(2**24 + 1), str(2**32), "feature", "tanh",
           "float32", "pixel", "½"]
TEXT_VALUE = st.one_of(st.sampled_from(HOSTILE), st.sampled_from(HOSTILE),
                       st.integers(-2**70, 2**70).map(str),
                       st.floats(allow_nan=True, allow_infinity=True).map(repr),
                       st.lists(st.integers(-3, 2**26), max_size=5).map(
                           lambda v: ",".join(map(str, v))),
                       st.text(max_size=8))
PY_VALUE = st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
                     st.booleans(), st.none(), TEXT_VALUE,
                     st.lists(st.one_of(st.integers(-3, 2**26), st.floats(-1, 1e3)),
                              max_size=5),
                     st.dictionaries(st.text(max_size=2), st.integers(), max_size=2))
EXPERIMENT = st.sampled_from(names())
PRESET = st.sampled_from(["quick", "paper"])

_counter = itertools.count()


@pytest.fixture
def stub_run(monkeypatch):
    """``run_named`` replaced: records its arguments, runs nothing."""
    from boundcalc.validators.experiments import configure

    calls: list[dict] = []

    def run_named(name, preset, **kwargs):
        calls.append({"name": name, "preset": preset, **kwargs})
        return Path(kwargs["out"]) if kwargs.get("out") else Path("runs") / name

    monkeypatch.setattr(configure, "run_named", run_named)
    monkeypatch.setattr(experiment_api, "load_run", lambda folder: folder)
    return calls


def _cli(args: list[str]) -> tuple[int, str]:
    err, out = io.StringIO(), io.StringIO()
    with redirect_stderr(err), redirect_stdout(out):
        code = main(args)
    return code, err.getvalue() + out.getvalue()


def _experiment_accepts(call: dict) -> None:
    """The experiment's own ``make_config`` accepts what the front door let through."""
    if not HAS_TORCH:
        return
    row = experiment(call["name"])
    first = (call["data"],) if "data" in row.options else (call["seeds"],)
    load(row.make_config)(call["preset"], *first, device="cpu", **dict(call["fields"] or {}))


def _check_cli(code: int, text: str, folder: Path, calls: list[dict]) -> None:
    assert code in (0, 2), text
    assert "Traceback" not in text and "internal error" not in text, text
    if code == 2:
        lines = text.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), text
        assert not folder.exists(), text
    else:
        assert calls, text
        _experiment_accepts(calls[-1])


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(name=EXPERIMENT, preset=PRESET, pairs=st.lists(st.tuples(KEY, TEXT_VALUE), max_size=3))
def test_set_overrides_exit_0_or_2_and_2_leaves_no_run_directory(tmp_path, stub_run, name,
                                                                 preset, pairs):
    folder = tmp_path / f"run{next(_counter)}"
    args = ["reproduce", name, "--preset", preset, "--device", "cpu", "--out", str(folder)]
    for key, value in pairs:
        args += ["--set", f"{key}={value}"]
    stub_run.clear()
    code, text = _cli(args)
    _check_cli(code, text, folder, stub_run)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") \
            if math.isinf(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}"
                               for k, v in value.items()) + "}"
    if value is None:
        return '"none"'
    return json.dumps(value) if isinstance(value, str) else str(value)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(name=EXPERIMENT, preset=PRESET,
       pairs=st.dictionaries(KEY, PY_VALUE.filter(lambda v: v is not None), max_size=3))
def test_toml_overrides_exit_0_or_2_and_2_leaves_no_run_directory(tmp_path, stub_run, name,
                                                                  preset, pairs):
    index = next(_counter)
    folder = tmp_path / f"run{index}"
    toml = tmp_path / f"config{index}.toml"
    toml.write_text("".join(f"{json.dumps(k)} = {_toml_value(v)}\n" for k, v in pairs.items()),
                    encoding="utf-8", errors="surrogatepass")
    stub_run.clear()
    code, text = _cli(["reproduce", name, "--preset", preset, "--device", "cpu", "--config",
                       str(toml), "--out", str(folder)])
    _check_cli(code, text, folder, stub_run)


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(name=EXPERIMENT, preset=PRESET, overrides=st.dictionaries(KEY, PY_VALUE, max_size=3))
def test_api_overrides_raise_input_error_or_run(tmp_path, stub_run, name, preset, overrides):
    folder = tmp_path / f"run{next(_counter)}"
    overrides = {k: v for k, v in overrides.items()
                 if k not in ("name", "preset", "out", "progress")}
    stub_run.clear()
    try:
        boundcalc.reproduce(name, preset, out=folder, progress=False, **overrides)
    except InputError:
        assert not folder.exists()
        return
    assert stub_run
    _experiment_accepts(stub_run[-1])
