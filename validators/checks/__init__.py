"""Measurements that try to falsify the paper's statements, one module per statement.

Adversarial searches over the parameters, the initialisation and the inputs (:mod:`.space`,
:mod:`.ascent`, :mod:`.search`, records and bounds in :mod:`.records`) for Definition 1
(:mod:`.event`), Lemma 2 (:mod:`.lemma2`), Lemma 3 (:mod:`.lemma3`), Lemma 6 (:mod:`.lemma6`),
Remark 3 (:mod:`.remark3`) and the tight route's constants (:mod:`.tight`,
:mod:`.label_envelope`), run over a grid by :mod:`.grid`; probability and training checks of
Lemma 5 (:mod:`.lemma5`), Theorem 1 and Proposition 1 (:mod:`.training`); and the run-measured
decomposition of the proof's slack along one training run (:mod:`.certify`, :mod:`.certify_chain`).
"""

__all__: list[str] = []  # the subpackages are imported by name; nothing is re-exported
