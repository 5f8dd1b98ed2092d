"""The measurement of one ``boundcalc validate`` cell: one statement at one seed.

A cell is the unit a validation run stores (:class:`boundcalc.runs.directory.RunDirectory`) and
skips when run again. :func:`cell_runner` maps a (statement, settings, seed) to the validator that
measures what could falsify the statement's bound — the adversarial searches, the training runs,
the GD generalization bound's encoder, the IndRNN — as a zero-argument callable returning
measured-vs-bound records, looked up in the catalog's falsifiers
(:data:`boundcalc.theory.catalog.FALSIFIERS`: each names its module and function);
:func:`tag_record` and :func:`bound_not_positive` normalise each record before it is stored.
The validators (and torch) are imported only when a cell runs.

Example:
    >>> tag_record({"name": "L", "statement": "claim"}, "lemma2", 0, 1.23456)
    {'statement': 'lemma2', 'seed': 0, 'seconds': 1.235, 'name': 'L', 'claim': 'claim'}
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import import_module

from boundcalc.inputs.validate_flags import check_falsifier
from boundcalc.theory.catalog import FALSIFIER
from boundcalc.validation.settings import ValidationSettings

__all__ = ["bound_not_positive", "cell_runner", "load_training_kernel", "tag_record"]


def cell_runner(statement: str, s: ValidationSettings, seed: int) -> Callable[[], list[dict]]:
    """The measurement of one (statement, seed) cell, as a zero-argument callable: the function
    that the statement's row of :data:`boundcalc.theory.catalog.FALSIFIERS` names, in its module
    of :mod:`boundcalc.validators` (imported here, with torch), bound to the run's settings and
    ``seed``. An unknown statement is an :class:`InputError` naming ``STATEMENT``.

    Example:
        >>> from boundcalc.theory.catalog import FALSIFIER
        >>> FALSIFIER["prop1"].module, FALSIFIER["prop1"].function
        ('checks.training', 'prop1_cell')
    """
    row = FALSIFIER[check_falsifier(statement)]
    measure = getattr(import_module(f"boundcalc.validators.{row.module}"), row.function)
    return functools.partial(measure, s, seed)


def load_training_kernel(s: ValidationSettings) -> None:
    """Build or load the compiled training step for the run's (d, dtype) where it applies (CPU,
    tanh); its backend and, for torch, the reason are then in
    :func:`boundcalc.runs.directory.environment` (``cpu_kernel``)."""
    import torch

    from boundcalc.validators.model import get_activation
    from boundcalc.validators.train import kernel_for

    kernel_for(get_activation(s.activation), getattr(torch, s.dtype), torch.device(s.device),
                s.d)


def bound_not_positive(record: dict) -> dict:
    """A record with conditions (``generalization``) whose bound is <= 0 bounds nothing: it is
    not applicable (``conditions_hold`` false, ``cond_bound_positive`` false, ``bound_positive``
    among ``failing``, ``verdict`` not_guaranteed), has no ratio (None, never ``inf``) and says why
    in ``not_applicable``.
    Other records are returned unchanged."""
    if "conditions_hold" not in record:
        return record
    try:
        bound = float(record["bound"])
    except (KeyError, TypeError, ValueError):
        return record
    if not bound <= 0:
        return record
    form = "printed" if "printed" in str(record.get("method", "")) else "derived"
    sign = "negative" if bound < 0 else "zero"
    failing = [f for f in str(record.get("failing", "none")).split(",")
               if f and f not in ("none", "bound_positive")]
    verdict = ({"verdict": "not_guaranteed", "bound_over_free": None} if "verdict" in record
               else {})
    return {**record, **verdict, "ratio": None, "conditions_hold": False,
            "cond_bound_positive": False,
            "failing": ",".join([*failing, "bound_positive"]),
            "not_applicable": f"not applicable (the {form} bound is {sign}: {bound:.6g} <= 0 "
                              f"bounds no loss, so no ratio)"}


def tag_record(record: dict, statement: str, seed: int, seconds: float) -> dict:
    """Prefix a measurement with its cell; a validator's own ``statement`` text is ``claim``."""
    rest = dict(record)
    claim = rest.pop("statement", None)
    tagged = {"statement": statement, "seed": seed, "seconds": round(seconds, 3), **rest}
    if claim is not None:
        tagged["claim"] = claim
    return tagged
