"""The data the validators run on: synthetic and user-supplied token sequences (:mod:`.inputs`),
the autoregressive task of Section 6.2 (:mod:`.ar_task`), and digit images as tokens for paper
003's Table 1 and ``validate generalization`` (:mod:`.mnist`, :mod:`.digits`)."""

__all__: list[str] = []  # the subpackages are imported by name; nothing is re-exported
