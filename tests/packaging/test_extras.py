"""The core calculator installs and runs without the dask and slurm extras; asking for their
executor without them is one line naming the extra (exit 2)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# a stand-in for an install without the extras (and without torch): importing them fails
_ABSENT = """
import sys
class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("dask", "distributed", "submitit", "torch"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, Absent())
"""


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _ABSENT + code], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


def test_the_extras_are_optional_dependencies_only():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    core = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M).group(1)
    assert not re.search(r"dask|distributed|submitit", core)
    extras = text[text.index("[project.optional-dependencies]"):]
    assert re.search(r'^dask = \[.*"dask\[distributed\]>=', extras, re.M)
    assert re.search(r'^slurm = \[.*"submitit>=', extras, re.M)


@pytest.mark.slow
def test_the_calculator_runs_without_the_extras(tmp_path):
    proc = _run("from boundcalc.cli import main\n"
                "import boundcalc.execution.executors, boundcalc.execution.engines\n"
                "import boundcalc.cli.reproduce\n"
                "code = main(['theorem1', '--m', '512', '--n', '1000', '--format', 'json',"
                " '--output', 'out.json'])\n"
                "print(code, sorted(m for m in ('dask', 'distributed', 'submitit', 'torch')"
                " if m in sys.modules))\n", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0 []"
    assert (tmp_path / "out.json").exists()


def test_an_executor_without_its_extra_is_one_line_naming_it(tmp_path):
    for kind, module, args in (("dask", "dask", ["validate", "lemma2"]),
                               ("slurm", "submitit", ["reproduce", "figure1"])):
        proc = _run("from boundcalc.cli import main\n"
                    f"sys.exit(main({args + ['--executor', kind]!r}))\n", tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.splitlines() == [
            f"error: --executor {kind} needs {module}{', distributed' if kind == 'dask' else ''}"
            f", which is not installed: pip install 'boundcalc[{kind}]'"]
