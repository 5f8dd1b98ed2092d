"""The input layer: every input of every surface is a row, checked once, before any work.

The calculator's Transformer parameters are :data:`boundcalc.inputs.params.PARAMS`; the other
surfaces' flags are rows of :mod:`boundcalc.inputs.surfaces` (``validate``, ``generalization``,
``check``, ``compare-rnn``, prop2's α), :mod:`~boundcalc.inputs.calculator_flags`,
:mod:`~boundcalc.inputs.table_flags` and :mod:`~boundcalc.inputs.executor_flags`, each with its
type, range, unit and meaning (:class:`boundcalc.inputs.flags.Flag`); a sweep flag's lists and
ranges are :mod:`~boundcalc.inputs.sweep_values`, the Python API's keywords
:mod:`~boundcalc.inputs.keywords`, the experiments' overrides :mod:`~boundcalc.inputs.overrides`.
Conditions over several inputs are the rules of :mod:`boundcalc.inputs.rules` (each refuses, exit
2, or makes its statements not applicable), which flags go together is
:mod:`~boundcalc.inputs.combinations`, what a flag needs of the machine (torch, a GPU,
Slurm) :mod:`~boundcalc.inputs.environment`, and the content of the data files given with
``--data`` (their arrays, shapes, finite values, enough samples for N)
:mod:`~boundcalc.inputs.data_files`. ``validate`` checks all of it in one call
(:func:`boundcalc.inputs.validate_flags.check_validate`) before any run directory, lock or torch
import.
"""

__all__: list[str] = []
