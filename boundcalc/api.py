"""Evaluate the paper's statements for concrete sizes: the Python API behind the CLI.

Two evaluators read the same sympy expressions of :mod:`boundcalc.theory`:

* :func:`evaluate` — one parameter point, mpmath at ``precision`` significant digits (inputs are
  passed as exact decimal strings, so ``δ = 0.05`` is 1/20 rounded once to the working precision,
  not its binary float; conditions are decided exactly, with :class:`fractions.Fraction`);
* :func:`evaluate_grid` — numpy-vectorised over arrays of parameters, for sweeps. Inputs are not
  broadcast before the evaluation, so a quantity that depends on m only is computed once per m.

Both run Python functions *generated* from the sympy expressions (common-subexpression
elimination, then sympy's mpmath / numpy code printers: what ``sympy.lambdify`` does). The
generated code and the metadata the CLI shows (names, descriptions, conditions) are kept in a user
cache, ``$XDG_CACHE_HOME/boundcalc`` (``~/.cache/boundcalc``; ``BOUNDCALC_CACHE_DIR`` overrides it,
``BOUNDCALC_NO_CACHE=1`` turns it off), keyed by a hash of every ``theory`` source file, of this
module and of sympy's version, so that a point evaluation imports neither sympy nor the theory
once the cache holds its statement. The sympy expressions stay the single source of truth: code
is only ever generated from them, a changed theory file changes the key, and the cached and the
freshly generated code are the same text, run the same way (a test checks the numbers agree).

Neither evaluator imports torch.

Example:
    >>> from boundcalc.api import evaluate
    >>> from boundcalc.params import validate
    >>> res = evaluate("theorem1", validate(m=512, n=1000, rho="2"))
    >>> sorted(res.to_dict())
    ['bound', 'conditions', 'constants', 'inputs', 'probability', 'statement', 'terms', 'version']
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import mpmath

from boundcalc import __version__
from boundcalc.params import InputError, Inputs

#: Names of the arguments of every generated function, in order (the symbols of
#: ``ARGUMENTS``; ``ARGUMENTS`` itself, the sympy symbols, is imported on first use).
ARGUMENT_NAMES: tuple[str, ...] = (
    "m", "n", "d", "T", "delta", "rho_c", "rho_u", "rho_w", "nu_c", "nu_u", "nu_w",
    "sigma0", "sigma1", "sigma2", "K", "eta", "b", "epsilon_mis",
)
_ETA = ARGUMENT_NAMES.index("eta")

DEFAULT_PRECISION = 20

#: Version of the cache layout and of the generated code; part of the cache key.
_CODE_FORMAT = "3"

#: Key of the eta* expression among a statement's constants.
_STEP_KEY = "theorem_step_size"

#: Verdicts of a statement whose constants include the trivial bound B² (see
#: :attr:`Evaluation.verdict`): every condition holds and min_iterate < B²; every condition holds
#: and min_iterate ≥ B² (the bound says nothing, R̂ ≤ B² always); a condition fails; a quantity
#: exceeds the float range (:data:`OVERFLOW`, any statement).
VERDICTS: tuple[str, ...] = ("guaranteed", "vacuous", "not_guaranteed", "overflow")

#: Verdict of a result with a quantity beyond the float range (see :func:`overflows`): never a
#: number, never ``inf``; the exact mpmath value is shown as text and no bound is guaranteed.
OVERFLOW = "overflow"

#: Largest finite float64.
FLOAT_MAX = sys.float_info.max


def overflows(value: Any) -> bool:
    """Whether a (finite) mpmath / exact value lies beyond the float64 range, i.e. ``float`` of
    it would be ``inf`` (or it is already infinite).

    Example:
        >>> overflows(mpmath.mpf(10) ** 400), overflows(mpmath.mpf(10) ** 300), overflows(None)
        (True, False, False)
    """
    if value is None or isinstance(value, (bool, str)):
        return False
    try:
        mp = mpmath.mpf(value) if not isinstance(value, mpmath.mpf) else value
    except (TypeError, ValueError):
        return False
    if mpmath.isnan(mp):
        return False
    return bool(mpmath.isinf(mp) or abs(mp) > FLOAT_MAX)


def overflow_text(value: Any) -> str:
    """Exact value of an overflowing quantity in scientific notation, as text (7 digits).

    Example:
        >>> overflow_text(mpmath.mpf(2) ** 2048)
        '3.231701e+616'
    """
    mp = mpmath.mpf(value)
    if mpmath.isinf(mp):
        return "-infinite" if mp < 0 else "infinite"
    return mpmath.nstr(mp, 7, min_fixed=1, max_fixed=0, strip_zeros=False)

#: Key of the trivial bound B² among the constants, and of the bound it is compared with.
TRIVIAL_KEY, VERDICT_BOUND = "trivial_bound_B2", "min_iterate"

#: The tight route's two bounds on min_iterate, by the name of their drift bound.
DRIFT_BOUNDS: dict[str, str] = {"linear_drift": "min_iterate_linear_drift",
                                "cauchy_schwarz": "min_iterate_cauchy_schwarz"}


def __getattr__(name: str) -> Any:
    """``ARGUMENTS``: the sympy symbols of :data:`ARGUMENT_NAMES` (imports sympy on first use)."""
    if name == "ARGUMENTS":
        return _arguments()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _arguments() -> tuple[Any, ...]:
    from boundcalc.theory import symbols as S

    args = (S.m, S.n, S.d, S.T, S.delta, S.rho_c, S.rho_u, S.rho_w, S.nu_c, S.nu_u, S.nu_w,
            S.sigma0, S.sigma1, S.sigma2, S.K, S.eta, S.b, S.eps_mis)
    assert tuple(s.name for s in args) == ARGUMENT_NAMES
    return args


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ConditionResult:
    """One evaluated hypothesis: ``{name, holds, detail}`` in JSON."""

    name: str
    holds: bool
    detail: str


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


@dataclass(frozen=True)
class Evaluation:
    """A statement evaluated at one point. ``to_dict()`` is the stable JSON contract; a quantity
    undefined at the point (η* when L·B = 0 and η is given) is None there.

    ``statement`` is the :class:`CompiledStatement` (or any object with ``name``, ``title`` and
    ``summary``, such as a sympy :class:`~boundcalc.theory.statement.Statement`).
    """

    statement: Any
    inputs: dict[str, Any]
    constants: dict[str, mpmath.mpf | None]
    terms: dict[str, mpmath.mpf | None]
    bound: dict[str, mpmath.mpf | None]
    probability: mpmath.mpf
    conditions: tuple[ConditionResult, ...]
    precision: int

    @property
    def guaranteed(self) -> bool:
        """True when every condition holds (the bound is then guaranteed on its event)."""
        return all(c.holds for c in self.conditions)

    @property
    def overflow(self) -> tuple[str, ...]:
        """``group.name`` of every quantity (and input σ) beyond the float range, in order."""
        out = [f"{group}.{k}" for group in ("constants", "terms", "bound")
               for k, v in getattr(self, group).items() if overflows(v)]
        out += [f"inputs.{k}" for k in ("sigma0", "sigma1", "sigma2")
                if overflows(self.inputs.get(k))]
        if overflows(self.probability):
            out.append("probability")
        return tuple(out)

    @property
    def verdict(self) -> str | None:
        """``overflow`` (a quantity exceeds the float range: :attr:`overflow`; no bound is
        guaranteed), else ``guaranteed`` (every condition holds and min_iterate < B²), ``vacuous``
        (every condition holds, min_iterate ≥ B²: R̂ ≤ B² for every θ, so the bound says nothing)
        or ``not_guaranteed`` (a condition fails); None for a statement without B² (the lemmas)
        that does not overflow. Decided at the working precision (a quantity undefined at the
        point counts as vacuous)."""
        if self.overflow:
            return OVERFLOW
        if TRIVIAL_KEY not in self.constants or VERDICT_BOUND not in self.bound:
            return None
        if not self.guaranteed:
            return "not_guaranteed"
        value, trivial = self.bound[VERDICT_BOUND], self.constants[TRIVIAL_KEY]
        if value is None or trivial is None or not value < trivial:
            return "vacuous"
        return "guaranteed"

    @property
    def active_drift_bound(self) -> str | None:
        """On the tight route, which drift bound gives min_iterate: ``cauchy_schwarz`` (when it
        is at most the other) or ``linear_drift``; None elsewhere (one bound only)."""
        linear = self.bound.get(DRIFT_BOUNDS["linear_drift"])
        cauchy = self.bound.get(DRIFT_BOUNDS["cauchy_schwarz"])
        if linear is None or cauchy is None:
            return None
        return "cauchy_schwarz" if cauchy <= linear else "linear_drift"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with keys statement, inputs, constants, terms, bound, conditions,
        probability, version (floats are finite). A quantity beyond the float range is the text of
        its exact value (``"1.234567e+612"``), and the dict then also has ``verdict: "overflow"``
        and ``overflow``, the list of those quantities (:attr:`overflow`)."""
        def one(v: Any) -> float | str | None:
            if v is None:
                return None
            return overflow_text(v) if overflows(v) else float(v)

        def fl(group: dict[str, mpmath.mpf | None]) -> dict[str, float | str | None]:
            return {k: one(v) for k, v in group.items()}

        over = self.overflow
        head: dict[str, Any] = {"verdict": OVERFLOW, "overflow": list(over)} if over else {}
        inputs = {k: (overflow_text(v) if overflows(v) else v) for k, v in self.inputs.items()}
        return {
            **head,
            "statement": {
                "name": self.statement.name,
                "title": self.statement.title,
                "summary": self.statement.summary,
                "guaranteed": self.guaranteed,
                "route": getattr(self.statement, "route", "") or None,
                "precision_digits": self.precision,
            },
            "inputs": inputs,
            "constants": fl(self.constants),
            "terms": fl(self.terms),
            "bound": fl(self.bound),
            "conditions": [
                {"name": c.name, "holds": c.holds, "detail": c.detail} for c in self.conditions
            ],
            "probability": one(self.probability),
            "version": __version__,
        }


# --------------------------------------------------------------------------- code cache


def cache_dir() -> Path | None:
    """Folder of the generated-code cache: ``$BOUNDCALC_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/boundcalc``, else ``~/.cache/boundcalc``; None when ``BOUNDCALC_NO_CACHE``
    is set (to anything but ``0`` or empty) or ``BOUNDCALC_CACHE_DIR`` is empty."""
    if os.environ.get("BOUNDCALC_NO_CACHE", "0").strip() not in ("", "0"):
        return None
    override = os.environ.get("BOUNDCALC_CACHE_DIR")
    if override is not None:
        return Path(override).expanduser() if override.strip() else None
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    if base and os.path.isabs(base):
        return Path(base) / "boundcalc"
    try:
        return Path.home() / ".cache" / "boundcalc"
    except RuntimeError:  # no home folder: the temporary-folder fallback only
        return Path(tempfile.gettempdir()) / f"boundcalc-{_uid()}"


def _uid() -> str:
    return str(os.getuid()) if hasattr(os, "getuid") else "user"


@cache
def code_key() -> str:
    """Hash of what the generated code depends on: every ``theory/*.py`` file, this module (the
    generator), sympy's version, the Python version and :data:`_CODE_FORMAT`."""
    import importlib.util

    digest = hashlib.sha256()
    digest.update(f"{_CODE_FORMAT}|{__version__}|{sys.version_info[:2]}".encode())
    digest.update(Path(__file__).read_bytes())
    spec = importlib.util.find_spec("boundcalc.theory")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders[:1]:
        for path in sorted(Path(folder).glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    sympy_spec = importlib.util.find_spec("sympy")
    if sympy_spec is not None and sympy_spec.origin:
        release = Path(sympy_spec.origin).with_name("release.py")
        digest.update(release.read_bytes() if release.exists() else sympy_spec.origin.encode())
    return digest.hexdigest()[:32]


def _private_folder(path: Path) -> bool:
    """True when ``path`` is a folder owned by this user that nobody else can write to (code
    from it is executed)."""
    try:
        st = path.stat()
    except OSError:
        return False
    if not hasattr(os, "getuid"):  # pragma: no cover - not POSIX
        return True
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def _cache_folder() -> Path | None:
    """The folder of this key's code: under :func:`cache_dir`, else (when that cannot be created
    or is not private to this user) under a private folder of the temporary directory; None when
    the cache is off or neither works."""
    primary = cache_dir()
    if primary is None:
        return None
    fallback = Path(tempfile.gettempdir()) / f"boundcalc-{_uid()}"
    for root in dict.fromkeys([primary, fallback]):
        folder = root / code_key()
        try:
            if not folder.exists():
                folder.mkdir(mode=0o700, parents=True)
                _prune(root, keep=folder.name)
        except OSError:
            continue
        if _private_folder(folder):
            return folder
    return None


def _seal(text: str) -> str:
    body_hash = hashlib.sha256(text.encode()).hexdigest()
    return f"# boundcalc generated code {code_key()} {body_hash}\n{text}"


def _unseal(sealed: str) -> str | None:
    head, _, body = sealed.partition("\n")
    parts = head.split()
    if (len(parts) != 6 or parts[:4] != ["#", "boundcalc", "generated", "code"]
            or parts[4] != code_key()
            or parts[5] != hashlib.sha256(body.encode()).hexdigest()):
        return None
    return body


def _read_cached(name: str) -> str | None:
    folder = _cache_folder()
    if folder is None:
        return None
    try:
        sealed = (folder / name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return _unseal(sealed)


def _write_cached(name: str, text: str) -> None:
    """Atomic write (temporary file, then rename); without a usable folder the code is simply
    not kept."""
    folder = _cache_folder()
    if folder is None:
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(_seal(text))
        os.replace(tmp, folder / name)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _prune(root: Path, keep: str, days: float = 7.0) -> None:
    """Remove the code of other keys (older theory versions) untouched for ``days``."""
    import shutil
    import time

    cutoff = time.time() - days * 86400
    try:
        for entry in root.iterdir():
            if (entry.name != keep and len(entry.name) == 32 and entry.is_dir()
                    and all(c in "0123456789abcdef" for c in entry.name)
                    and entry.stat().st_mtime < cutoff):
                shutil.rmtree(entry, ignore_errors=True)
    except OSError:
        pass


def _generated(name: str, make: Callable[[], str]) -> str:
    """The generated text called ``name``: from the cache, else made (with sympy) and cached."""
    text = _read_cached(name)
    if text is None:
        text = make()
        _write_cached(name, text)
    return text


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


def _function_source(exprs: list[Any], kind: str) -> str:
    """``def f(<ARGUMENT_NAMES>)`` returning the list of ``exprs``, after common-subexpression
    elimination, printed for ``kind`` (``mpmath`` or ``numpy``)."""
    import sympy as sp

    printer = _printer(kind)
    taken = set(ARGUMENT_NAMES) | {"f", "mpmath", "numpy"}
    symbols = (sp.Symbol(f"x{i}") for i in range(10**9) if f"x{i}" not in taken)
    replacements, reduced = sp.cse([sp.sympify(e) for e in exprs], symbols=symbols)
    lines = [f"def f({', '.join(ARGUMENT_NAMES)}):"]
    lines += [f"    {sym.name} = {printer.doprint(value)}" for sym, value in replacements]
    lines.append("    return [" + ", ".join(printer.doprint(e) for e in reduced) + "]")
    return "\n".join(lines) + "\n"


def _statement(name: str):
    from boundcalc.theory.registry import get_statement

    return get_statement(name)


def _make_meta(name: str) -> str:
    st = _statement(name)
    rational_inputs = set(ARGUMENT_NAMES) - {"sigma0", "sigma1", "sigma2", "eta"}
    conditions = []
    for cond in st.conditions:
        symbols = sorted(s.name for s in cond.relation.free_symbols)
        try:
            if not set(symbols) <= rational_inputs:
                raise ValueError("inexact")
            code, exact = _printer("exact").doprint(cond.relation), True
        except ValueError:
            code, exact = _printer("mpmath").doprint(cond.relation), False
        conditions.append({"name": cond.name, "requirement": cond.requirement, "why": cond.why,
                           "symbols": symbols, "code": code, "exact": exact})
    used = sorted(s.name for s in st.free_symbols())
    meta = {
        "name": st.name, "title": st.title, "summary": st.summary,
        "keys": list(st.expressions()),
        "groups": {g: list(getattr(st, g)) for g in ("constants", "terms", "bound")},
        "descriptions": dict(st.descriptions), "latex_names": dict(st.latex_names),
        "used": used, "step": _STEP_KEY in st.constants, "conditions": conditions,
        "route": st.route,
    }
    if set(used) - set(ARGUMENT_NAMES):
        raise ValueError(f"statement {name!r} uses symbols outside ARGUMENT_NAMES: "
                         f"{sorted(set(used) - set(ARGUMENT_NAMES))}")
    return json.dumps(meta, indent=1, ensure_ascii=False)


def _make_function(name: str, kind: str, star: bool) -> str:
    from boundcalc.theory import symbols as S

    st = _statement(name)
    exprs = list(st.expressions().values())
    if star:
        step = st.constants[_STEP_KEY]
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
    text = _read_cached(f"{name}.meta.json")
    if text is None:
        text = _make_meta(name)  # raises ValueError for an unknown name
        _write_cached(f"{name}.meta.json", text)
    meta = json.loads(text)
    conditions = tuple(ConditionInfo(c["name"], c["requirement"], c["why"], tuple(c["symbols"]),
                                     c["code"], c["exact"]) for c in meta["conditions"])
    return CompiledStatement(
        name=meta["name"], title=meta["title"], summary=meta["summary"],
        keys=tuple(meta["keys"]), groups={g: tuple(v) for g, v in meta["groups"].items()},
        descriptions=meta["descriptions"], latex_names=meta["latex_names"],
        used=frozenset(meta["used"]), step=meta["step"], conditions=conditions, key=code_key(),
        route=meta["route"],
    )


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
    source = _generated(label, lambda: _make_function(name, module, star))
    return _run(source, label, module)


@cache
def _numpy_conditions(name: str) -> Callable[..., list[Any]]:
    label = f"{name}.numpy_conditions.py"
    return _run(_generated(label, lambda: _make_conditions(name)), label, "numpy")


@cache
def _activation_sources() -> dict[str, list[str]]:
    return json.loads(_generated("activations.json", _make_activations))


def activation_presets() -> tuple[str, ...]:
    """Names of the activation presets (``tanh``, ``erf``)."""
    return tuple(_activation_sources())


def parse_activation(spec: str) -> tuple[str, tuple[Fraction, Fraction, Fraction] | None]:
    """(name, exact custom bounds or None for a preset) of an activation spec; ``ValueError``
    with a message that reads after the flag name (``--activation must be ...``).

    Example:
        >>> parse_activation("custom:1,0.5,0.25")
        ('custom:1,0.5,0.25', (Fraction(1, 1), Fraction(1, 2), Fraction(1, 4)))
    """
    text = str(spec).strip()
    key = text.lower()
    presets = activation_presets()
    if key in presets:
        return key, None
    if key.startswith("custom:"):
        parts = key[len("custom:"):].split(",")
        if len(parts) != 3:
            raise ValueError(f"must be custom:S0,S1,S2 with three bounds, got {spec!r}")
        try:
            values = tuple(Fraction(p.strip()) for p in parts)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"must be custom:S0,S1,S2 with three numbers, got {spec!r}") from None
        if any(v < 0 for v in values):
            raise ValueError(f"must be custom:S0,S1,S2 with bounds >= 0, got {spec!r}")
        return text, values  # type: ignore[return-value]
    raise ValueError(f"must be {', '.join(presets)} or custom:S0,S1,S2, got {spec!r}")


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


# --------------------------------------------------------------------------- evaluation


def _exact_values(inputs: Inputs) -> dict[str, int | Fraction]:
    """Exact value of every rational input (η only when given; σ only for custom activations)."""
    values: dict[str, int | Fraction] = {
        "m": inputs.m, "n": inputs.n, "d": inputs.d, "T": inputs.T,
        "delta": Fraction(inputs.delta), "rho_c": Fraction(inputs.rho[0]),
        "rho_u": Fraction(inputs.rho[1]), "rho_w": Fraction(inputs.rho[2]),
        "nu_c": Fraction(inputs.nu[0]), "nu_u": Fraction(inputs.nu[1]),
        "nu_w": Fraction(inputs.nu[2]), "K": inputs.steps, "b": inputs.batch_size,
        "epsilon_mis": Fraction(inputs.misspecification),
    }
    if inputs.eta is not None:
        values["eta"] = Fraction(inputs.eta)
    _, custom = parse_activation(inputs.activation)
    if custom is not None:
        values.update(zip(("sigma0", "sigma1", "sigma2"), custom, strict=True))
    return values


def _mp(value: int | Fraction) -> mpmath.mpf:
    if isinstance(value, int):
        return +mpmath.mpf(value)
    return mpmath.mpf(value.numerator) / value.denominator


def mp_arguments(inputs: Inputs, precision: int = DEFAULT_PRECISION) -> dict[str, mpmath.mpf]:
    """mpmath value of every argument name at ``precision`` digits, each input rounded once;
    ``eta`` is the given step size, or 0 when η is not given (eta* replaces it)."""
    values = _exact_values(inputs)
    with mpmath.workdps(precision):
        out = {k: _mp(v) for k, v in values.items() if not k.startswith("sigma")}
        out.update(zip(("sigma0", "sigma1", "sigma2"),
                       activation_values(inputs.activation, precision), strict=True))
        out.setdefault("eta", mpmath.mpf(0))
    return {k: out[k] for k in ARGUMENT_NAMES}


def show_number(value: Any) -> str:
    """A number in a condition's detail: integers as integers, others with 6 significant digits.

    Example:
        >>> show_number(512), show_number(Fraction(1, 20)), show_number(Fraction(1, 3))
        ('512', '0.05', '0.333333')
    """
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Fraction) and value.denominator == 1:
        return str(value.numerator)
    if getattr(value, "is_Integer", False):  # sympy Integer
        return str(int(value))
    number = float(value)
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return f"{number:.6g}"


def _check_step_budget(st: CompiledStatement, inputs: Inputs) -> None:
    if st.step and inputs.eta is None and all(Fraction(v) == 0 for v in inputs.nu):
        raise InputError("--nu", "needs a positive component when --eta is not given (the "
                                 "theorem's step size is proportional to ||nu||)")


def _conditions(st: CompiledStatement, inputs: Inputs, args: Mapping[str, mpmath.mpf],
                precision: int) -> tuple[ConditionResult, ...]:
    exact = _exact_values(inputs)
    out = []
    for cond in st.conditions:
        if cond.exact:
            scope: dict[str, Any] = {"Fraction": Fraction, **{s: exact[s] for s in cond.symbols}}
            shown = {s: exact[s] for s in cond.symbols}
            holds = bool(eval(cond.code, {"__builtins__": {}}, scope))  # generated code
        else:
            with mpmath.workdps(precision + 10):
                scope = {"mpmath": mpmath, **{s: +args[s] for s in cond.symbols}}
                holds = bool(eval(cond.code, {"__builtins__": {}}, scope))  # generated code
            shown = {s: args[s] for s in cond.symbols}
        text = ", ".join(f"{s} = {show_number(v)}" for s, v in shown.items())
        detail = f"{cond.requirement} {'holds' if holds else 'FAILS'} ({text})"
        out.append(ConditionResult(cond.name, holds, detail if holds else f"{detail}: {cond.why}"))
    return tuple(out)


def evaluate(name: str, inputs: Inputs, precision: int = DEFAULT_PRECISION) -> Evaluation:
    """Evaluate statement ``name`` at ``inputs`` with mpmath at ``precision`` digits.

    Args:
        name: a key of :data:`boundcalc.theory.registry.BUILDERS` (``theorem1``, ``lemma2`` ...).
        inputs: validated inputs (:func:`boundcalc.params.validate`).
        precision: significant decimal digits of the mpmath evaluation (≥ 10).

    Returns:
        :class:`Evaluation`. η is the given ``inputs.eta``, else the theorem's step size η* for
        statements that define one; ``inputs["eta"]`` is the η used (or the given η, which such a
        statement does not use), None when neither, and ``inputs["eta_source"]`` says which.

    Raises:
        InputError: η* is needed and undefined: ``--nu`` when ν = 0 (η* would be 0), ``--eta``
            when L·B = 0.
    """
    if precision < 10:
        raise ValueError(f"`precision` must be >= 10 digits, got {precision}")
    st = compiled_statement(name)
    _check_step_budget(st, inputs)
    star = st.step and inputs.eta is None
    func = statement_function(name, "mpmath", star)
    with mpmath.workdps(precision):
        args = mp_arguments(inputs, precision)
        try:
            values = [+mpmath.mpf(v) for v in func(*args.values())]
        except ZeroDivisionError:  # a quantity undefined at this point (eta* when L·B = 0)
            values = _evaluate_exactly(name, inputs, star, precision)
        out = dict(zip(st.keys, values, strict=True))
        result_inputs = inputs.as_dict()
        if star:
            eta_used, source = float(out[f"constants.{_STEP_KEY}"]), "theorem step size eta*"
        elif inputs.eta is not None:
            eta_used, source = float(args["eta"]), "given"
        else:
            eta_used, source = None, "not used"
        result_inputs["eta"] = eta_used
        result_inputs["eta_source"] = source
        for sym_name in ("sigma0", "sigma1", "sigma2"):  # mpmath where beyond the float range
            sigma = args[sym_name]
            result_inputs[sym_name] = sigma if overflows(sigma) else float(sigma)
        constants = {k: out[f"constants.{k}"] for k in st.constants}
        terms = {k: out[f"terms.{k}"] for k in st.terms}
        bound = {k: out[f"bound.{k}"] for k in st.bound}
        probability = out["probability"]
    conditions = _conditions(st, inputs, args, precision)
    return Evaluation(st, result_inputs, constants, terms, bound, probability, conditions,
                      precision)


def _evaluate_exactly(name: str, inputs: Inputs, star: bool, precision: int
                      ) -> list[mpmath.mpf | None]:
    """Every expression of ``name`` evaluated one by one from exact sympy values (the slow path,
    taken only when the generated code divides by zero): None for a quantity undefined at this
    point; η* undefined when it is needed is an :class:`InputError` (``--eta``)."""
    import sympy as sp

    from boundcalc.theory import symbols as S

    st = _statement(name)
    values = symbol_values(inputs)
    if star:
        step = sp.sympify(st.constants[_STEP_KEY]).xreplace(values)
        if not (step.is_finite and step.is_positive):
            raise InputError("--eta", "must be given here: the theorem's step size eta* = "
                                      "||nu||/(2 L B sqrt(K)) is undefined, since L*B = 0")
        values[S.eta] = step
    elif inputs.eta is not None:
        values[S.eta] = sp.Rational(inputs.eta)
    out: list[mpmath.mpf | None] = []
    for expr in st.expressions().values():
        value = sp.N(sp.sympify(expr).xreplace(values), precision + 5)
        out.append(+mpmath.mpf(value) if value.is_real and value.is_finite else None)
    return out


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
            step = np.asarray(outputs[st.keys.index(f"constants.{_STEP_KEY}")], dtype=float)
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


def has_verdict(name: str) -> bool:
    """Whether statement ``name`` reports the trivial bound B² next to min_iterate (Theorem 1,
    Proposition 1, Remark 9 on both routes, Proposition 2), i.e. has a :attr:`Evaluation.verdict`.

    Example:
        >>> has_verdict("theorem1_paper"), has_verdict("lemma2")
        (True, False)
    """
    st = compiled_statement(name)
    return TRIVIAL_KEY in st.constants and VERDICT_BOUND in st.bound


def verdict_column(guaranteed: Any, bound: Any, trivial: Any):
    """:attr:`Evaluation.verdict` of every row of a grid (numpy): ``guaranteed`` rows (every
    condition holds) whose ``bound`` (min_iterate) is below ``trivial`` (B²) are ``guaranteed``,
    the other ``guaranteed`` rows ``vacuous`` (NaN counts as vacuous), the rest
    ``not_guaranteed``. Returns an array of ``int8`` codes into :data:`VERDICTS`.

    Example:
        >>> [VERDICTS[c] for c in verdict_column([True, True, False], [1.0, 3.0, 1.0], 2.0)]
        ['guaranteed', 'vacuous', 'not_guaranteed']
    """
    import numpy as np

    with np.errstate(invalid="ignore"):
        below = np.asarray(bound, dtype=float) < np.asarray(trivial, dtype=float)
    ok = np.asarray(guaranteed, dtype=bool)
    return np.where(ok, np.where(below, 0, 1), 2).astype(np.int8)


# --------------------------------------------------------------------------- sympy helpers


def symbol_values(inputs: Inputs) -> dict[Any, Any]:
    """Exact sympy values of every argument symbol except η (which may be defaulted)."""
    import sympy as sp

    from boundcalc.theory import symbols as S
    from boundcalc.theory.activations import get_activation

    def exact(text: str | int) -> Any:
        return sp.Rational(str(text))

    act = get_activation(inputs.activation)
    return {
        S.m: sp.Integer(inputs.m), S.n: sp.Integer(inputs.n), S.d: sp.Integer(inputs.d),
        S.T: sp.Integer(inputs.T), S.delta: exact(inputs.delta),
        S.rho_c: exact(inputs.rho[0]), S.rho_u: exact(inputs.rho[1]),
        S.rho_w: exact(inputs.rho[2]),
        S.nu_c: exact(inputs.nu[0]), S.nu_u: exact(inputs.nu[1]), S.nu_w: exact(inputs.nu[2]),
        S.sigma0: act.sigma0, S.sigma1: act.sigma1, S.sigma2: act.sigma2,
        S.K: sp.Integer(inputs.steps), S.b: sp.Integer(inputs.batch_size),
        S.eps_mis: exact(inputs.misspecification),
    }


def _to_mpf(value: Any) -> mpmath.mpf:
    import sympy as sp

    return mpmath.mpf(sp.N(value, mpmath.mp.dps + 5))


def _condition_detail(cond: Any, values: Mapping[Any, Any], holds: bool) -> str:
    """Detail of a sympy :class:`~boundcalc.theory.statement.Condition` at exact sympy
    ``values`` (integers shown as integers, other numbers with 6 significant digits)."""
    shown = ", ".join(f"{s.name} = {show_number(values[s])}"
                      for s in sorted(cond.relation.free_symbols, key=str))
    text = f"{cond.requirement} {'holds' if holds else 'FAILS'} ({shown})"
    return text if holds else f"{text}: {cond.why}"
