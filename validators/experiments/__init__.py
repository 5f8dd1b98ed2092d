"""The paper's experiments as resumable runs: Figure 1 (Section 6.1 width sweep,
:mod:`.figure1`), Figure 2 (Section 6.2 IndRNN vs Transformer, :mod:`.figure2`) and paper 003's
Table 1 (:mod:`.table1`), with their shared run frame (:mod:`.experiment`), worker processes
(:mod:`.workers`) and figures redrawn from stored runs (:mod:`.figures`)."""

__all__: list[str] = []  # the subpackages are imported by name; nothing is re-exported
