"""The generalization bound of a shallow Transformer trained by gradient descent (the second
statement family): its inputs and its evaluation on the calculator's evaluator.
"""

__all__: list[str] = []
