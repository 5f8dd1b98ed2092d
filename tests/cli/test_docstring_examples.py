"""The examples in the docstrings of the CLI modules run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["boundcalc.formats", "boundcalc.search", "boundcalc.cli",
                                    "boundcalc.api", "boundcalc.params"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0
