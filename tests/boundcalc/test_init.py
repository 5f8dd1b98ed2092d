"""The package itself: a cheap import, the version, ``__all__`` on every public module, and the
PEP 561 marker ``py.typed`` in the installed package."""

from __future__ import annotations

import ast
import importlib.resources
import subprocess
import sys
from pathlib import Path

import boundcalc.theory

import boundcalc
from boundcalc.version import __version__


def test_import_boundcalc_loads_no_heavy_library_until_evaluate_is_used(tmp_path):
    code = ("import sys, boundcalc; heavy = ('sympy', 'pandas', 'numpy', 'mpmath', 'torch'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy)); "
            "boundcalc.evaluate('lemma2', m=64); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout.split("\n")
    assert out[:2] == ["[]", "False"]


def test_the_version_lives_in_its_own_module():
    assert boundcalc.__version__ == __version__
    assert boundcalc.evaluate("lemma2").to_dict()["version"] == __version__


def _modules(root: Path) -> list[Path]:
    """The modules under ``root``, less an installed package's mapped subpackages (their own
    roots) and ``__main__``."""
    return sorted(p for p in root.rglob("*.py") if p.name != "__main__.py"
                  and not {"validators", "theory"} & set(p.relative_to(root).parts[:-1]))


def test_every_public_module_declares_all():
    import importlib.util

    validators = Path(importlib.util.find_spec("boundcalc.validators").origin).parent
    roots = [Path(boundcalc.__file__).parent, Path(boundcalc.theory.__file__).parent, validators]
    missing = []
    for root in roots:
        for path in _modules(root):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                     for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                     if isinstance(t, ast.Name)}
            if "__all__" not in names:
                missing.append(str(path))
    assert not missing


def test_all_names_exist():
    import boundcalc.calc.api
    import boundcalc.calc.solvers
    import boundcalc.notebook

    for module in (boundcalc, boundcalc.calc.api, boundcalc.notebook, boundcalc.calc.solvers):
        assert all(hasattr(module, name) for name in module.__all__), module.__name__


def test_the_installed_package_is_marked_typed():
    assert importlib.resources.files("boundcalc").joinpath("py.typed").is_file()
