"""The compiled CPU kernel of the fused training step: the C source ``fused_step.c`` and its
ctypes loader :mod:`boundcalc.validators.kernel.cpu_kernel`."""

__all__: list[str] = []  # the subpackages are imported by name; nothing is re-exported
