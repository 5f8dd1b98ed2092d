"""Shared fixtures: ``cli`` runs ``boundcalc.cli.main`` in-process and captures its streams.

A test module that drives the torch validators says so with ``pytestmark =
pytest.mark.needs_torch``; where torch is not installed (the calculator's lowest-pins CI step) such
a module is not collected at all, since importing it may already need torch.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from boundcalc.cli import main

_TORCH = importlib.util.find_spec("torch") is not None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs_torch: the module drives the torch validators")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave out the modules marked ``needs_torch`` where torch is absent."""
    if _TORCH or collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    return "pytestmark = pytest.mark.needs_torch" in collection_path.read_text(encoding="utf-8")


@dataclass(frozen=True)
class Run:
    """Exit code and captured streams of one ``boundcalc`` invocation."""

    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """``cli("theorem1", "--m", "8")`` runs the command and returns :class:`Run`."""

    def run(*args: str) -> Run:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run
