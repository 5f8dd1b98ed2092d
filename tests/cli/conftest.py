"""Fixtures of the CLI tests: run ``boundcalc.cli.main`` in-process and capture its streams."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from boundcalc.cli import main


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
