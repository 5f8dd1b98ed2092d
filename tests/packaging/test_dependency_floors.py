"""The dependency floors of pyproject.toml are versions the CLI works with, and CI tests them.

Measured (see the comment in pyproject.toml): typer 0.12.0-0.12.3 fail every command ("Type not
yet supported: str | None"), 0.12.4-0.15.3 resolve to click >= 8.2, with which every command
prints the version or --help fails, 0.15.4 pins click < 8.2 (no NoArgsIsHelpError: every usage
error is an internal error); sympy 1.12-1.13.3 make `sweep` fail (Min printed as numpy.amin of a
list of arrays of different shapes).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The lowest versions found to work (each one below it fails some calculator test).
LOWEST_WORKING = {"numpy": (1, 24), "pandas": (2, 0), "sympy": (1, 14), "mpmath": (1, 3),
                  "typer": (0, 16), "click": (8, 2), "rich": (13,)}


def _floors() -> dict[str, tuple[int, ...]]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M).group(1)
    return {name: tuple(int(p) for p in floor.split("."))
            for name, floor in re.findall(r'"([A-Za-z0-9_.-]+)>=([0-9.]+)"', block)}


def test_every_calculator_dependency_has_a_floor_that_works():
    floors = _floors()
    assert set(LOWEST_WORKING) <= set(floors), sorted(set(LOWEST_WORKING) - set(floors))
    for name, lowest in LOWEST_WORKING.items():
        assert floors[name] >= lowest, f"{name}>={floors[name]} admits broken versions"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_ci_installs_exactly_the_floors_and_runs_the_calculator_tests():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # (checked before running it: a script without the flag would run the whole CI)
    assert '"${1:-}" = "--lowest-pins"' in script, "no lowest-versions step in .ci/run"
    step = script[script.index("# ---- lowest supported versions"):]
    assert "tests/boundcalc" in step and "tests/theory" in step and "pip check" in step
    out = subprocess.run(["bash", str(ROOT / ".ci" / "run"), "--lowest-pins"], cwd=ROOT,
                         capture_output=True, text=True, check=True, timeout=60).stdout.split()
    pins = dict(line.split("==") for line in out)
    for name, floor in _floors().items():
        assert tuple(int(p) for p in pins[name].split("."))[:len(floor)] == floor, name
