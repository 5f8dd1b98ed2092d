"""One evaluator: every formula of :mod:`boundcalc.theory` is evaluated through generated code.

A statement's sympy expressions are printed once as Python source, after common-subexpression
elimination, by sympy's mpmath and numpy code printers (what ``sympy.lambdify`` does), and kept in
the user cache (:mod:`boundcalc.calc.codecache`) with the metadata the CLI shows (names,
descriptions, conditions), so that a point evaluation imports neither sympy nor the theory once
the cache holds its statement. The sympy expressions stay the single source of truth: code is only
ever generated from them, and the cached and the freshly generated code are the same text, run
the same way.

* :func:`compiled_statement` / :func:`statement_function` — a registered statement's metadata and
  its function of the :data:`ARGUMENT_NAMES` (mpmath for points, numpy for grids);
* :func:`evaluate_grid` — numpy-vectorised over arrays of parameters (sweeps); inputs are not
  broadcast before the evaluation, so a quantity that depends on m only is computed once per m;
* :func:`compile_function` — the same code path for any list of expressions over any symbols
  (the a-posteriori bounds of the validators, paper 003's generalization bound, Proposition 2 at
  another recurrent scale), and :func:`cached_function` for such expressions built from the
  theory alone, whose generated code the cache then keeps (no sympy on the next run);
* :func:`cached_statement` — the same for a whole statement that is not registered (one with an
  extra symbol: Proposition 2 at a symbolic recurrent scale α), metadata and conditions included;
* :func:`condition_holds` — the one way a hypothesis is decided: exactly, with
  :class:`fractions.Fraction`, when every value and constant is rational, else with mpmath at the
  working precision plus 10 digits;
* the activation presets (σ₀, σ₁, σ₂ of ``tanh`` and ``erf``) and ``custom:S0,S1,S2`` specs.

Nothing here imports torch; sympy only when generating code.

Example:
    >>> compiled_statement("lemma3").keys[:2]
    ('constants.u_inf', 'constants.u_max')
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Any

import mpmath

from boundcalc.calc.codecache import code_key, generated, read_cached, write_cached
from boundcalc.inputs.calculator_flags import DEFAULT_PRECISION
from boundcalc.inputs.params import ARGUMENT_NAMES, parse_activation

__all__ = [
    "STEP_KEY", "CompiledStatement", "ConditionInfo", "activation_values",
    "cached_function", "cached_statement", "compile_function", "compiled_statement",
    "condition_holds", "condition_info",
    "evaluate_expressions", "evaluate_grid", "statement_function",
]

_ETA = ARGUMENT_NAMES.index("eta")

#: Default mpmath precision (significant decimal digits) of every point evaluation.
#: Key of the eta* expression among a statement's constants.
STEP_KEY = "theorem_step_size"


def __getattr__(name: str) -> Any:
    """``ARGUMENTS``: the sympy symbols of :data:`ARGUMENT_NAMES` (imports sympy on first use)."""
    if name == "ARGUMENTS":
        return _arguments()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _arguments() -> tuple[Any, ...]:
    from boundcalc.theory import symbols as S

    by_name = {s.name: s for s in S.ALL}
    return tuple(by_name[name] for name in ARGUMENT_NAMES)


@dataclass(frozen=True)
class ConditionInfo:
    """A hypothesis of a statement as generated code (see :class:`CompiledStatement`).

    ``code`` is a Python expression over the symbols ``symbols``; when ``exact`` it is evaluated
    with integers and :class:`~fractions.Fraction` values (rational constants print as
    ``Fraction(p, q)``), else with mpmath numbers at the working precision plus 10 digits.
    """

    name: str
    requirement: str
    why: str
    symbols: tuple[str, ...]
    code: str
    exact: bool


@dataclass(frozen=True)
class CompiledStatement:
    """What evaluating and showing a statement needs, without sympy: the generated metadata of a
    :class:`boundcalc.theory.statement.Statement` (same ``name``, ``title``, ``summary``,
    ``descriptions``, ``latex_names``).

    Attributes:
        keys: ``group.name`` of every expression, in the order the generated functions return.
        groups: the names of ``constants``, ``terms`` and ``bound``.
        used: names of every free symbol of the statement's expressions and conditions.
        step: whether the statement defines the step size eta* (``theorem_step_size``).
        conditions: the hypotheses, as :class:`ConditionInfo`.
    """

    name: str
    title: str
    summary: str
    keys: tuple[str, ...]
    groups: dict[str, tuple[str, ...]]
    descriptions: dict[str, str]
    latex_names: dict[str, str]
    used: frozenset[str]
    step: bool
    conditions: tuple[ConditionInfo, ...]
    key: str = field(default="", compare=False)
    route: str = ""

    @property
    def constants(self) -> tuple[str, ...]:
        return self.groups["constants"]

    @property
    def terms(self) -> tuple[str, ...]:
        return self.groups["terms"]

    @property
    def bound(self) -> tuple[str, ...]:
        return self.groups["bound"]


# --------------------------------------------------------------------------- code generation


def _printer(kind: str):
    from sympy.printing.numpy import NumPyPrinter
    from sympy.printing.pycode import MpmathPrinter, PythonCodePrinter

    settings = {"fully_qualified_modules": True, "inline": True,
                "allow_unknown_functions": False}
    if kind == "numpy":
        return NumPyPrinter(settings)
    if kind == "mpmath":
        return MpmathPrinter(settings)

    class ExactPrinter(PythonCodePrinter):
        """Rationals as ``Fraction(p, q)``; anything inexact is refused."""

        def _print_Rational(self, expr):
            return f"Fraction({expr.p}, {expr.q})"

        def _print_Half(self, expr):
            return self._print_Rational(expr)

        def _print_Float(self, expr):
            raise ValueError("inexact")

        def _print_Function(self, expr):
            raise ValueError("inexact")

        def _print_Pow(self, expr, rational=False):
            if not expr.exp.is_Integer:
                raise ValueError("inexact")
            return super()._print_Pow(expr, rational)

        def _print_NumberSymbol(self, expr):
            raise ValueError("inexact")

    return ExactPrinter(settings)


def _function_source(exprs: Sequence[Any], kind: str,
                     arguments: Sequence[str] = ARGUMENT_NAMES, eliminate: bool = True) -> str:
    """``def f(<arguments>)`` returning the list of ``exprs``, after common-subexpression
    elimination (unless not ``eliminate``), printed for ``kind`` (``mpmath`` or ``numpy``)."""
    import sympy as sp

    printer = _printer(kind)
    taken = set(arguments) | {"f", "mpmath", "numpy", "functools"}
    symbols = (sp.Symbol(f"x{i}") for i in range(10**9) if f"x{i}" not in taken)
    exprs = [sp.sympify(e) for e in exprs]
    replacements, reduced = sp.cse(exprs, symbols=symbols) if eliminate else ([], exprs)
    lines = [f"def f({', '.join(arguments)}):"]
    lines += [f"    {sym.name} = {printer.doprint(value)}" for sym, value in replacements]
    lines.append("    return [" + ", ".join(printer.doprint(e) for e in reduced) + "]")
    return "\n".join(lines) + "\n"


@cache
def compile_function(exprs: tuple[Any, ...], symbols: tuple[Any, ...], module: str = "mpmath",
                     eliminate: bool = True) -> Callable[..., list[Any]]:
    """``f(*values)`` returning the list of ``exprs`` at ``values`` of ``symbols``: the generated
    code of :func:`statement_function` for any expressions (same printer, same common-
    subexpression elimination), compiled once per distinct arguments.

    Args:
        exprs: sympy expressions (a tuple: the compiled function is cached on it).
        symbols: the sympy symbols that are the arguments, in order (a tuple).
        module: ``mpmath`` (call it inside ``mpmath.workdps``) or ``numpy``.
        eliminate: common-subexpression elimination. It evaluates a shared sub-expression once,
            also where it sits in a branch of a ``Piecewise`` that is not taken, so an expression
            whose untaken branch divides by zero at the point needs ``eliminate=False``.

    Example:
        >>> import sympy as sp
        >>> x, y = sp.symbols("x y", positive=True)
        >>> f = compile_function((x + y, sp.sqrt(x * y)), (x, y))
        >>> [float(v) for v in f(mpmath.mpf(4), mpmath.mpf(9))]
        [13.0, 6.0]
    """

    if module not in ("mpmath", "numpy"):
        raise ValueError(f"`module` must be 'mpmath' or 'numpy', got {module!r}")
    names, renamed = _renamed(exprs, symbols)
    source = _function_source(renamed, module, names, eliminate)
    return _run(source, "<boundcalc.calc.evaluator.compile_function>", module)


def _renamed(exprs: Sequence[Any], symbols: Sequence[Any]) -> tuple[tuple[str, ...], list[Any]]:
    """``(names, exprs)`` with the ``symbols`` renamed ``a0``, ``a1`` … (the arguments of the
    generated function, so no symbol name can clash with the code's own names).

    The renaming runs with sympy's evaluation off: the expressions are already evaluated, and
    rebuilding them would re-run ``Min`` / ``Max`` simplification on every node (Proposition 2
    with symbolic α: 10 s with it, 0.2 s without; the generated code is the same)."""
    import sympy as sp

    names = tuple(f"a{i}" for i in range(len(symbols)))
    renamed = {s: sp.Symbol(n, **s.assumptions0) for s, n in zip(symbols, names, strict=True)}
    with sp.evaluate(False):
        return names, [sp.sympify(e).xreplace(renamed) for e in exprs]


#: The functions of :func:`cached_function` made in this process, by (label, module).
_CACHED_FUNCTIONS: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...], Callable]] = {}


def cached_function(label: str, build: Callable[[], tuple[Sequence[str], Sequence[Any],
                                                            Sequence[Any]]],
                    module: str = "mpmath"
                    ) -> tuple[tuple[str, ...], tuple[str, ...], Callable[..., list[Any]]]:
    """``(keys, symbol names, f)`` of the expressions ``build()`` returns as ``(keys, exprs,
    symbols)``: :func:`compile_function`'s code, kept in the code cache under ``label``, so a
    later process neither builds the expressions nor runs sympy. The cache key covers the theory
    sources and this module only, so ``build`` must make its expressions from
    :mod:`boundcalc.theory` alone, and ``label`` name them uniquely.

    ``f(*values)`` takes the values of the symbols in the order of the names returned.

    Example:
        >>> def build():
        ...     import sympy as sp
        ...     x, y = sp.symbols("x y", positive=True)
        ...     return ("sum", "root"), (x + y, sp.sqrt(x * y)), (x, y)
        >>> keys, names, f = cached_function("doctest_sum_root", build)
        >>> keys, names, [float(v) for v in f(mpmath.mpf(4), mpmath.mpf(9))]
        (('sum', 'root'), ('x', 'y'), [13.0, 6.0])
    """
    if module not in ("mpmath", "numpy"):
        raise ValueError(f"`module` must be 'mpmath' or 'numpy', got {module!r}")
    if (label, module) not in _CACHED_FUNCTIONS:
        def make() -> str:

            keys, exprs, symbols = build()
            names, renamed = _renamed(exprs, symbols)
            source = _function_source(renamed, module, names)
            return json.dumps({"keys": list(keys), "symbols": [s.name for s in symbols],
                               "source": source}, indent=1)

        meta = json.loads(generated(f"{label}.{module}.json", make))
        _CACHED_FUNCTIONS[label, module] = (tuple(meta["keys"]), tuple(meta["symbols"]),
                                            _run(meta["source"], label, module))
    return _CACHED_FUNCTIONS[label, module]


def evaluate_expressions(expressions: Mapping[str, Any], values: Mapping[Any, Any],
                         precision: int = DEFAULT_PRECISION) -> dict[str, float]:
    """Evaluate named sympy expressions at numeric values of their free symbols, with mpmath at
    ``precision`` digits, through :func:`compile_function` (the validators' a-posteriori bounds).

    Example:
        >>> from boundcalc.theory.symbols import m
        >>> evaluate_expressions({"x": 2 * m}, {m: 3.0})
        {'x': 6.0}
    """
    import sympy as sp

    keys = list(expressions)
    exprs = tuple(sp.sympify(expressions[k]) for k in keys)
    symbols = tuple(sorted(set().union(*(e.free_symbols for e in exprs)), key=lambda s: s.name))
    missing = [s.name for s in symbols if s not in values]
    if missing:
        raise ValueError(f"`values` is missing {missing}")
    func = compile_function(exprs, symbols)
    with mpmath.workdps(precision):
        out = func(*[mpmath.mpf(values[s]) for s in symbols])
    return {k: float(v) for k, v in zip(keys, out, strict=True)}


def condition_info(name: str, relation: Any, requirement: str = "", why: str = "",
                   rational: Sequence[str] = ()) -> ConditionInfo:
    """A sympy relation as a :class:`ConditionInfo`: exact code (integers and
    :class:`~fractions.Fraction`) when every free symbol is in ``rational`` and every constant of
    the relation is rational, else mpmath code.

    Example:
        >>> import sympy as sp
        >>> m = sp.Symbol("m", positive=True)
        >>> info = condition_info("m_even", sp.Eq(sp.Mod(m, 2), 0), rational=["m"])
        >>> info.exact, condition_holds(info, {"m": 4}, {}), condition_holds(info, {"m": 3}, {})
        (True, True, False)
    """
    symbols = tuple(sorted(s.name for s in relation.free_symbols))
    try:
        if not set(symbols) <= set(rational):
            raise ValueError("inexact")
        code, exact = _printer("exact").doprint(relation), True
    except ValueError:
        code, exact = _printer("mpmath").doprint(relation), False
    return ConditionInfo(name, requirement, why, symbols, code, exact)


#: The only names generated condition code may use besides its symbols (sympy prints Max / Min
#: of numbers as the builtins).
_CONDITION_GLOBALS: dict[str, Any] = {"__builtins__": {"max": max, "min": min, "abs": abs}}


def condition_holds(info: ConditionInfo, exact: Mapping[str, Any], approximate: Mapping[str, Any],
                    precision: int = DEFAULT_PRECISION) -> bool:
    """Whether the hypothesis ``info`` holds: its exact code on the exact values (``exact``: ints
    and Fractions by symbol name), else its mpmath code on ``approximate`` (mpmath numbers) at
    ``precision`` + 10 digits. The one way every condition of every statement is decided."""
    if info.exact:
        scope: dict[str, Any] = {"Fraction": Fraction, **{s: exact[s] for s in info.symbols}}
        return bool(eval(info.code, _CONDITION_GLOBALS, scope))  # generated code
    with mpmath.workdps(precision + 10):
        scope = {"mpmath": mpmath, **{s: +mpmath.mpf(approximate[s]) for s in info.symbols}}
        return bool(eval(info.code, _CONDITION_GLOBALS, scope))  # generated code


def _statement(name: str):
    from boundcalc.theory.registry import get_statement

    return get_statement(name)


def _make_meta(name: str) -> str:
    return json.dumps(_statement_meta(_statement(name), ARGUMENT_NAMES), indent=1,
                      ensure_ascii=False)


def _statement_meta(st: Any, argument_names: Sequence[str]) -> dict[str, Any]:
    """The JSON-able metadata of the sympy statement ``st`` whose symbols are ``argument_names``
    (:class:`CompiledStatement`'s fields); every argument but σ and η is rational."""
    rational_inputs = sorted(set(argument_names) - {"sigma0", "sigma1", "sigma2", "eta"})
    conditions = []
    for cond in st.conditions:
        info = condition_info(cond.name, cond.relation, cond.requirement, cond.why,
                              rational_inputs)
        conditions.append({"name": info.name, "requirement": info.requirement, "why": info.why,
                           "symbols": list(info.symbols), "code": info.code,
                           "exact": info.exact})
    used = sorted(s.name for s in st.free_symbols())
    if set(used) - set(argument_names):
        raise ValueError(f"statement {st.name!r} uses symbols outside {list(argument_names)}: "
                         f"{sorted(set(used) - set(argument_names))}")
    return {
        "name": st.name, "title": st.title, "summary": st.summary,
        "keys": list(st.expressions()),
        "groups": {g: list(getattr(st, g)) for g in ("constants", "terms", "bound")},
        "descriptions": dict(st.descriptions), "latex_names": dict(st.latex_names),
        "used": used, "step": STEP_KEY in st.constants, "conditions": conditions,
        "route": st.route,
    }


def _compiled_from_meta(meta: Mapping[str, Any]) -> CompiledStatement:
    conditions = tuple(ConditionInfo(c["name"], c["requirement"], c["why"], tuple(c["symbols"]),
                                     c["code"], c["exact"]) for c in meta["conditions"])
    return CompiledStatement(
        name=meta["name"], title=meta["title"], summary=meta["summary"],
        keys=tuple(meta["keys"]), groups={g: tuple(v) for g, v in meta["groups"].items()},
        descriptions=meta["descriptions"], latex_names=meta["latex_names"],
        used=frozenset(meta["used"]), step=meta["step"], conditions=conditions, key=code_key(),
        route=meta["route"],
    )


def _make_function(name: str, kind: str, star: bool) -> str:
    from boundcalc.theory import symbols as S

    st = _statement(name)
    exprs = list(st.expressions().values())
    if star:
        step = st.constants[STEP_KEY]
        exprs = [e.xreplace({S.eta: step}) if hasattr(e, "xreplace") else e for e in exprs]
    return _function_source(exprs, kind)


def _make_conditions(name: str) -> str:
    return _function_source([c.relation for c in _statement(name).conditions], "numpy")


def _make_activations() -> str:
    from boundcalc.theory.activations import PRESETS

    printer = _printer("mpmath")
    return json.dumps({key: [printer.doprint(v) for v in act.as_dict().values()]
                       for key, act in PRESETS.items()}, indent=1)


def _run(source: str, filename: str, module: str) -> Callable[..., Any]:
    import functools  # sympy's numpy printer writes Min / Max as functools.reduce(numpy.minimum, …)

    if module == "numpy":
        import numpy

        namespace: dict[str, Any] = {"numpy": numpy, "functools": functools}
    else:
        namespace = {"mpmath": mpmath, "functools": functools}
    exec(compile(source, filename, "exec"), namespace)  # generated by _function_source
    return namespace["f"]


@cache
def compiled_statement(name: str) -> CompiledStatement:
    """The :class:`CompiledStatement` of statement ``name`` (``theorem1``, ``lemma2`` ...), from
    the cache when it holds it (no sympy), else generated from the theory.

    Raises:
        ValueError: unknown statement.

    Example:
        >>> compiled_statement("theorem1").title
        'Theorem 1 (ProjGD convergence)'
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"unknown statement {name!r}")
    text = read_cached(f"{name}.meta.json")
    if text is None:
        text = _make_meta(name)  # raises ValueError for an unknown name
        write_cached(f"{name}.meta.json", text)
    return _compiled_from_meta(json.loads(text))



#: The statements of :func:`cached_statement` made in this process, by label.
_CACHED_STATEMENTS: dict[str, tuple[CompiledStatement, tuple[str, ...], Callable[..., list[Any]],
                                    Callable[..., list[Any]] | None]] = {}


def cached_statement(label: str, build: Callable[[], tuple[Any, Sequence[Any]]],
                     eliminate: bool = True
                     ) -> tuple[CompiledStatement, tuple[str, ...], Callable[..., list[Any]],
                                Callable[..., list[Any]] | None]:
    """A statement that is not in the registry (one with an extra symbol, such as Proposition 2
    at a symbolic recurrent scale α) as generated mpmath code kept in the code cache under
    ``label``, so a later process neither builds it nor imports sympy.

    ``build()`` returns ``(statement, extra_symbols)``: a
    :class:`~boundcalc.theory.statement.Statement` made from :mod:`boundcalc.theory` alone (the
    cache key covers the theory sources and this module only) and the symbols it uses besides
    :data:`ARGUMENT_NAMES` (rational inputs, like every argument but σ and η).

    Returns:
        ``(compiled, names, f, step)``: its :class:`CompiledStatement`; the argument names
        (:data:`ARGUMENT_NAMES` then the extra ones); ``f(*values)`` returning every expression
        in ``compiled.keys`` order; ``step(*values)`` returning ``[eta*]`` (None when the
        statement defines no step size). ``eliminate=False`` turns common-subexpression
        elimination off (see :func:`compile_function`).

    Example:
        >>> def build():
        ...     from boundcalc.theory.prop2 import alpha, prop2
        ...     return prop2(alpha), (alpha,)
        >>> compiled, names, f, step = cached_statement("doctest_prop2_alpha", build, False)
        >>> compiled.name, names[-1], compiled.keys == compiled_statement("prop2").keys
        ('prop2', 'alpha', True)
    """
    if label not in _CACHED_STATEMENTS:
        def make() -> str:
            st, extra = build()
            symbols = (*_arguments(), *extra)
            names = tuple(s.name for s in symbols)
            meta = _statement_meta(st, names)
            exprs = list(st.expressions().values())
            arguments, renamed = _renamed(exprs, symbols)
            meta["arguments"] = list(names)
            meta["source"] = _function_source(renamed, "mpmath", arguments, eliminate)
            if meta["step"]:
                arguments, renamed = _renamed([st.constants[STEP_KEY]], symbols)
                meta["step_source"] = _function_source(renamed, "mpmath", arguments, eliminate)
            return json.dumps(meta, indent=1, ensure_ascii=False)

        meta = json.loads(generated(f"{label}.statement.json", make))
        step = (_run(meta["step_source"], f"{label}.step", "mpmath") if meta["step"] else None)
        _CACHED_STATEMENTS[label] = (_compiled_from_meta(meta), tuple(meta["arguments"]),
                                     _run(meta["source"], label, "mpmath"), step)
    return _CACHED_STATEMENTS[label]

@cache
def statement_function(name: str, module: str = "mpmath", star: bool = False
                       ) -> Callable[..., list[Any]]:
    """Generated function of the :data:`ARGUMENT_NAMES` returning every expression of ``name``
    (in ``compiled_statement(name).keys`` order), for ``module`` ``mpmath`` or ``numpy``. With
    ``star`` the step size is eta* (the ``eta`` argument is then ignored)."""
    if module not in ("mpmath", "numpy"):
        raise ValueError(f"module must be 'mpmath' or 'numpy', got {module!r}")
    st = compiled_statement(name)
    star = star and st.step
    label = f"{name}.{module}{'_star' if star else ''}.py"
    source = generated(label, lambda: _make_function(name, module, star))
    return _run(source, label, module)


@cache
def _numpy_conditions(name: str) -> Callable[..., list[Any]]:
    label = f"{name}.numpy_conditions.py"
    return _run(generated(label, lambda: _make_conditions(name)), label, "numpy")


@cache
def _activation_sources() -> dict[str, list[str]]:
    return json.loads(generated("activations.json", _make_activations))


def activation_values(spec: str, precision: int = DEFAULT_PRECISION) -> tuple[mpmath.mpf, ...]:
    """(σ₀, σ₁, σ₂) of an activation as mpmath numbers at ``precision`` digits.

    Example:
        >>> [float(v) for v in activation_values("tanh")][:2]
        [1.0, 1.0]
    """
    name, exact = parse_activation(spec)
    with mpmath.workdps(precision):
        if exact is not None:
            return tuple(mpmath.mpf(v.numerator) / v.denominator for v in exact)
        return tuple(+mpmath.mpf(eval(src, {"mpmath": mpmath}))  # generated by _make_activations
                     for src in _activation_sources()[name])


def evaluate_grid(name: str, columns: dict[str, Any]):
    """Vectorised evaluation over broadcastable numpy arrays (sweeps).

    Args:
        name: statement name.
        columns: one entry per argument name of :data:`ARGUMENT_NAMES` (floats or arrays, all
            broadcastable to one shape). ``eta`` may be ``None`` or NaN entries to use η*.

    Returns:
        dict of numpy arrays: every argument, every ``group.key`` expression, and
        ``condition.<name>`` booleans, all of the broadcast shape (read-only broadcast views:
        each is computed at the shape of the inputs it depends on).
    """
    import numpy as np

    st = compiled_statement(name)
    missing = [a for a in ARGUMENT_NAMES if a not in columns]
    if missing:
        raise ValueError(f"`columns` is missing {missing}")
    with np.errstate(all="ignore"):
        arrays = [np.asarray(columns[a] if columns[a] is not None else np.nan, dtype=float)
                  for a in ARGUMENT_NAMES]
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        eta = arrays[_ETA]
        default = np.isnan(eta)
        if st.step and default.any():
            outputs = statement_function(name, "numpy", True)(*arrays)
            step = np.asarray(outputs[st.keys.index(f"constants.{STEP_KEY}")], dtype=float)
            if not default.all():
                given = statement_function(name, "numpy", False)(*arrays)
                outputs = [np.where(default, a, b) for a, b in zip(outputs, given, strict=True)]
                step = np.where(default, step, eta)
            arrays[_ETA] = step
        else:
            outputs = statement_function(name, "numpy", False)(*arrays)
        conditions = _numpy_conditions(name)(*arrays) if st.conditions else []
    result = {a: np.broadcast_to(arrays[i], shape) for i, a in enumerate(ARGUMENT_NAMES)}
    for key, value in zip(st.keys, outputs, strict=True):
        result[key] = np.broadcast_to(np.asarray(value, dtype=float), shape)
    for cond, value in zip(st.conditions, conditions, strict=True):
        result[f"condition.{cond.name}"] = np.broadcast_to(np.asarray(value, dtype=bool), shape)
    return result
