"""Lemma 6's measurement (and Lemma 3's): bad activations and absent devices are refused."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.lemma3 import validate_lemma3  # noqa: E402
from boundcalc.validators.checks.lemma6 import validate_lemma6  # noqa: E402


def test_unknown_activation_and_missing_cuda_are_rejected():
    with pytest.raises(ValueError, match="activation"):
        validate_lemma3(4, 2, 2, "1", activation="relu", starts=1, steps=0)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="`device`"):
            validate_lemma6(4, 2, 2, "1", device="cuda", starts=1, steps=0)
