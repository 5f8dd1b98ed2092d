"""The version of boundcalc, in a module of its own so that any module can import it without
importing the package's ``__init__`` (which exposes the notebook API).

Example:
    >>> from boundcalc.version import __version__
    >>> __version__.count(".")
    2
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
