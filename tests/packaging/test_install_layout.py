"""The installed distribution nests theory/ and validators/ inside boundcalc (pyproject mapping)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _probe(code: str, tmp_path: Path) -> str:
    # run from an empty directory so the repository root is not on sys.path
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def test_no_top_level_theory_or_validators_package_is_installed(tmp_path):
    code = ("import importlib.util as u; "
            "print(u.find_spec('theory'), u.find_spec('validators'))")
    assert _probe(code, tmp_path) == "None None"


def test_theory_and_validators_import_as_boundcalc_subpackages(tmp_path):
    code = ("import boundcalc.theory as t, boundcalc.validators as v; "
            "print(t.__name__, v.__name__)")
    assert _probe(code, tmp_path) == "boundcalc.theory boundcalc.validators"


def test_calculator_path_never_imports_torch(tmp_path):
    code = ("import sys; from boundcalc.calc.api import evaluate; "
            "from boundcalc.inputs.params import validate;"
            "import boundcalc.cli; evaluate('theorem1', validate()); print('torch' in sys.modules)")
    assert _probe(code, tmp_path) == "False"


def test_an_uninstalled_source_tree_fails_in_one_line_naming_the_editable_install(tmp_path):
    import shutil

    import boundcalc

    if any("__editable__" in str(getattr(finder, "__module__", "")) for finder in sys.meta_path):
        import pytest

        pytest.skip("an editable install maps boundcalc.theory by name for any source tree")
    # a source tree: boundcalc/ beside (not inside) theory/, and the working directory on sys.path
    shutil.copytree(Path(boundcalc.__file__).parent, tmp_path / "boundcalc",
                    ignore=shutil.ignore_patterns("theory", "validators", "__pycache__"))
    proc = subprocess.run([sys.executable, "-c", "import boundcalc"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last == f"ImportError: {boundcalc._SOURCE_TREE_MESSAGE}"
    assert "pip install -e" in last
