"""Torch validators: the paper's model, trainers and the measurements that could falsify each
bound.

The model and its training (:mod:`.model`, :mod:`.train`, :mod:`.teacher`, :mod:`.ntk`,
:mod:`.indrnn`, :mod:`.encoder`, :mod:`.device`), the measurements one module per statement
(:mod:`.checks`), the paper's experiments (:mod:`.experiments`), the data they run on
(:mod:`.data`) and the compiled CPU kernel of the training step (:mod:`.kernel`)."""

__all__: list[str] = []  # the subpackages are imported by name; nothing is re-exported
