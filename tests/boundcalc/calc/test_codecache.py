"""The generated-code cache: cached and freshly generated code give the same numbers, a cached
point evaluation imports no sympy, a damaged or foreign entry is regenerated, an unusable folder
falls back, and the folder follows the environment."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from boundcalc import files
from boundcalc.calc import codecache

_PROBE = """
import json, sys
from boundcalc.calc.api import evaluate
from boundcalc.calc.evaluator import evaluate_grid
from boundcalc.inputs.params import ARGUMENT_NAMES
from boundcalc.inputs.params import validate
out = {}
for name in ("theorem1", "prop1", "remark9", "lemma2", "lemma3", "lemma5", "lemma6", "event"):
    for kw in ({}, {"eta": "1e-4", "activation": "erf", "rho": "2,3,1", "nu": "1,2,3"}):
        out[name + str(kw)] = evaluate(name, validate(m=512, n=1000, **kw), precision=25).to_dict()
cols = dict.fromkeys(ARGUMENT_NAMES, 1.0)
cols.update(m=[8.0, 64.0, 1e6], n=[[10.0], [1e4]], delta=0.05, eta=None, epsilon_mis=0.0)
grid = evaluate_grid("theorem1", cols)
out["grid"] = {k: v.tolist() for k, v in grid.items()}
print(json.dumps({"sympy": "sympy" in sys.modules, "out": out}))
"""


def _probe(env_update: dict[str, str]) -> dict:
    env = {**os.environ, **env_update}
    # a neutral working directory: from the repository root `python -c` would import the source
    # tree's boundcalc/ (which has no theory/ inside) instead of the installed package
    proc = subprocess.run([sys.executable, "-c", _PROBE], cwd=tempfile.gettempdir(),
                          capture_output=True, text=True,
                          env=env, timeout=300, check=True)
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> tuple[Path, dict]:
    """A cache folder filled by one probe that generated every piece with sympy, and that probe's
    output (several tests compare with it: each generation costs seconds of sympy)."""
    cache = tmp_path_factory.mktemp("codecache") / "cache"
    return cache, _probe({"BOUNDCALC_CACHE_DIR": str(cache)})


@pytest.fixture(scope="module")
def uncached() -> dict:
    """The probe's output with no cache at all (generated with sympy, nothing written)."""
    return _probe({"BOUNDCALC_NO_CACHE": "1"})


@pytest.mark.slow
def test_cached_and_freshly_generated_code_give_identical_numbers(fresh, uncached):
    cache, generated = fresh  # empty cache: generated with sympy
    files = sorted(p.name for p in cache.glob("*/*"))
    assert "theorem1.meta.json" in files and "theorem1.mpmath_star.py" in files
    cached = _probe({"BOUNDCALC_CACHE_DIR": str(cache)})  # every piece from the cache
    assert generated["sympy"] and uncached["sympy"] and not cached["sympy"]
    assert cached["out"] == generated["out"] == uncached["out"]


@pytest.mark.parametrize("argv", [
    ["theorem1", "--m", "512", "--n", "1000", "--rho", "2"],
    ["compare-rnn", "--T", "1,64", "--alpha", "0.5"],  # Proposition 2 at another α
], ids=["theorem1", "compare-rnn"])
@pytest.mark.slow
def test_a_cached_point_evaluation_imports_no_sympy(argv, tmp_path):
    env = {**os.environ, "BOUNDCALC_CACHE_DIR": str(tmp_path)}
    code = ("import sys; from boundcalc.cli import main; "
            f"code = main({argv!r} + ['--output', "
            "'/dev/null']); print(code, 'sympy' in sys.modules)")
    first = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                           text=True, env=env, timeout=300, check=True)
    second = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, env=env, timeout=300, check=True)
    assert first.stdout.split() == ["0", "True"]
    assert second.stdout.split() == ["0", "False"]


@pytest.mark.slow
def test_a_damaged_or_foreign_cache_entry_is_regenerated(fresh, tmp_path):
    cache, generated = fresh
    damaged = tmp_path / "cache"
    shutil.copytree(cache, damaged)  # the shared folder stays intact for the other tests
    edited = 0
    for path in damaged.glob("*/theorem1.*"):
        text = path.read_text()
        path.write_text(text.replace("mpmath.sqrt", "mpmath.log").replace('"title"', '"x"'))
        edited += text != path.read_text()
    assert edited  # the cached theorem1 code really was damaged
    probe = _probe({"BOUNDCALC_CACHE_DIR": str(damaged)})
    assert probe["sympy"]  # regenerated
    assert probe["out"] == generated["out"]


@pytest.mark.slow
def test_an_unwritable_cache_folder_falls_back(tmp_path, uncached):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be")
    probe = _probe({"BOUNDCALC_CACHE_DIR": str(blocked / "boundcalc")})
    assert probe["out"] == uncached["out"]


def test_sealed_text_is_checked_against_key_and_body():
    sealed = codecache.seal("def f():\n    return 1\n")
    assert codecache.unseal(sealed) == "def f():\n    return 1\n"
    assert codecache.unseal(sealed.replace("return 1", "return 2")) is None
    head, _, body = sealed.partition("\n")
    assert codecache.unseal(head.replace(codecache.code_key(), "0" * 32) + "\n" + body) is None


def test_cache_location_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("BOUNDCALC_CACHE_DIR", raising=False)
    monkeypatch.delenv("BOUNDCALC_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert files.cache_root() == tmp_path / "boundcalc"
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert files.cache_root() == tmp_path / "elsewhere"
    monkeypatch.setenv("BOUNDCALC_NO_CACHE", "1")
    assert files.cache_root() is None
