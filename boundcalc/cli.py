"""The ``boundcalc`` command: evaluate, sweep, solve and explain the paper's bounds.

Commands (``boundcalc COMMAND --help`` shows each one's flags and runnable examples):

* ``theorem1``, ``prop1``, ``remark9``, ``lemma2``, ``lemma3``, ``lemma5``, ``lemma6``, ``event``,
  ``prop2``: evaluate one statement at one parameter point (mpmath, ``--precision`` digits) and
  print its inputs (defaults included), constants, terms, bounds, probability and conditions;
* ``sweep STATEMENT``: the same over a grid (lists and ranges of any numeric flag), vectorised;
* ``width`` / ``steps``: the smallest even m (resp. number of steps K) that brings the width terms
  (resp. the optimization term) of Theorem 1 under ``--target``; ``width --nonvacuous``: the
  smallest even m at which Theorem 1's bound is non-vacuous (min_iterate < B²);
* ``explain STATEMENT``: the statement, its symbol glossary, every formula and condition.

``--route tight|paper`` (default ``tight``) picks the proof route of Theorem 1, Proposition 1 and
Remark 9 (``theorem1``, ``prop1``, ``remark9``, and ``sweep`` / ``width`` / ``steps`` / ``explain``
on them); every output names its route. Statements with the trivial bound B² (those three and
``prop2``) get a verdict: ``guaranteed`` (every condition holds and min_iterate < B²),
``vacuous`` (every condition holds, min_iterate ≥ B²) or ``not_guaranteed`` (a condition fails).

Exit codes: 0 success; 1 the verdict is not ``guaranteed`` (a condition fails, or the bound is
vacuous) and ``--strict`` was given, or a ``--target`` cannot be met, or no width up to 2^62 makes
the bound non-vacuous; 2 bad input (one line on stderr naming the flag, no traceback); 3 an
internal error.

Example:
    >>> from boundcalc.cli import main
    >>> main(["theorem1", "--m", "512", "--n", "1000", "--rho", "2", "--format", "csv",
    ...       "--output", "/dev/null"])
    0
"""

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from boundcalc import __version__
from boundcalc.formats import (
    FORMATS,
    check_format,
    guarantee_line,
    iter_frame,
    latex_text,
    render_frame,
    render_result,
)
from boundcalc.params import DEFAULTS, InputError, parse_integer, parse_number, validate
from boundcalc.rundir import honour_umask

#: Statements of :mod:`boundcalc.theory.registry` (kept literal so that ``--help`` needs no sympy).
STATEMENTS: tuple[str, ...] = ("event", "lemma2", "lemma3", "lemma5", "lemma6", "theorem1",
                               "prop1", "remark9", "prop2")

#: Statements with a proof route (``--route``); kept literal like :data:`STATEMENTS` (the same as
#: ``boundcalc.theory.registry.ROUTED``, a test checks it).
ROUTED: tuple[str, ...] = ("theorem1", "prop1", "remark9")

#: Choices of ``--route``; the first is the default.
ROUTES: tuple[str, ...] = ("tight", "paper")

#: Default mpmath precision (significant digits) of point evaluations.
DEFAULT_PRECISION = 20

#: Significant digits that ``width`` / ``steps`` tables show (the answer sits at the target).
SOLVER_DIGITS = 12

#: Flag of each key of ``Evaluation.to_dict()["inputs"]``.
INPUT_FLAGS: dict[str, str] = {
    "m": "m", "n": "n", "d": "d", "T": "T", "delta": "delta",
    "rho_c": "rho", "rho_u": "rho", "rho_w": "rho", "nu_c": "nu", "nu_u": "nu", "nu_w": "nu",
    "K": "steps", "eta": "eta", "activation": "activation", "b": "batch_size",
    "epsilon_mis": "misspecification", "sigma0": "activation", "sigma1": "activation",
    "sigma2": "activation",
}

#: Unicode display names of named quantities (``--symbolic``, ``explain``); others print as is.
QUANTITY_UNICODE: dict[str, str] = {
    "u_inf": "u_∞", "u_max": "u_max", "c_max": "c_max", "lipschitz_L": "L",
    "smoothness_beta": "β", "eps_lin": "ε_lin", "eps_app": "ε_app", "eps_cf": "ε_cf",
    "output_envelope_F": "F", "label_envelope_Y": "Y", "residual_envelope_B": "B",
    "transport_norm": "‖ν‖", "theorem_step_size": "η*", "head_gradient_G": "G",
    "head_hessian_H": "H", "r_uw": "r_uw", "log_factor": "ℓ",
    "loss_gradient_envelope": "‖∇R̂‖_max", "trivial_bound_B2": "B²",
}

app = typer.Typer(
    name="boundcalc",
    help="Bound calculator for 'Finite-Time Analysis of Gradient Descent for Shallow "
         "Transformers' (Arda, Cayci & Eryilmaz, AISTATS 2026): every constant, term and bound, "
         "evaluated, swept, solved for and explained.",
    epilog="Examples:\n\n"
           "boundcalc theorem1 --m 512 --n 1000 --rho 2\n\n"
           "boundcalc sweep theorem1 --m 8:4096:x2 --n 1e3,1e6 --format csv --output sweep.csv\n\n"
           "boundcalc width --target 0.1 --n 1e6\n\n"
           "boundcalc explain theorem1",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# --------------------------------------------------------------------------- option types

_PARAMS = "Parameters"
_OUTPUT = "Output"


def _opt(*names: str, help: str, default: object = None, panel: str = _PARAMS,
         metavar: str = "NUM") -> Any:
    shown = "" if default is None else str(default)
    return typer.Option(*names, help=help, show_default=shown or False, rich_help_panel=panel,
                        metavar=metavar)


MOpt = Annotated[str | None, _opt("--m", metavar="EVEN", default=DEFAULTS["m"],
                                  help="width m: number of heads (positive, even)")]
NOpt = Annotated[str | None, _opt("--n", metavar="INT", default=DEFAULTS["n"],
                                  help="number of training samples (>= 1)")]
DOpt = Annotated[str | None, _opt("--d", metavar="INT", default=DEFAULTS["d"],
                                  help="token dimension (>= 1)")]
TOpt = Annotated[str | None, _opt("--T", metavar="INT", default=DEFAULTS["T"],
                                  help="sequence length (no Transformer bound depends on it; "
                                       "prop2's IndRNN bounds grow with it past the cutoff)")]
DeltaOpt = Annotated[str | None, _opt("--delta", metavar="P", default=DEFAULTS["delta"],
                                      help="failure probability per event, in (0, 1)")]
RhoOpt = Annotated[str | None, _opt("--rho", metavar="R[,R,R]", default=DEFAULTS["rho"],
                                    help="projection radii: one value or rho_c,rho_u,rho_w")]
NuOpt = Annotated[str | None, _opt("--nu", metavar="V[,V,V]", default=DEFAULTS["nu"],
                                   help="transport budgets: one value or nu_c,nu_u,nu_w")]
StepsOpt = Annotated[str | None, _opt("--steps", metavar="K", default=DEFAULTS["steps"],
                                      help="number of gradient steps K (>= 1)")]
EtaOpt = Annotated[str | None, _opt("--eta", metavar="ETA", help="step size (> 0)",
                                    default="eta* = ||nu||/(2 L B sqrt(K))")]
ActOpt = Annotated[str | None, _opt("--activation", metavar="NAME",
                                    default=DEFAULTS["activation"],
                                    help="tanh, erf or custom:S0,S1,S2")]
BatchOpt = Annotated[str | None, _opt("--batch-size", metavar="B", default=DEFAULTS["batch_size"],
                                      help="ProjSGD minibatch size b (1 <= b <= n)")]
MisOpt = Annotated[str | None, _opt("--misspecification", metavar="EPS",
                                    help="eps_mis = max_j |y_j - f*(X_j)| (>= 0)",
                                    default=DEFAULTS["misspecification"])]
PrecOpt = Annotated[str | None, _opt("--precision", metavar="DIGITS", panel=_OUTPUT,
                                     default=DEFAULT_PRECISION,
                                     help="significant digits of the mpmath evaluation (>= 10); "
                                          "the table then shows up to 17")]
FmtOpt = Annotated[str, typer.Option("--format", "-f", help=f"one of {', '.join(FORMATS)}",
                                     metavar="FORMAT", rich_help_panel=_OUTPUT)]
OutOpt = Annotated[str | None, typer.Option("--output", "-o", help="write to FILE (atomically) "
                                            "instead of stdout", metavar="FILE",
                                            rich_help_panel=_OUTPUT)]
SymOpt = Annotated[bool, typer.Option("--symbolic", help="also print every formula (Unicode and "
                                      "LaTeX); table, markdown and latex formats",
                                      rich_help_panel=_OUTPUT)]
StrictOpt = Annotated[bool, typer.Option("--strict", help="exit 1 unless the verdict is "
                                         "guaranteed (a condition fails, or the bound is vacuous: "
                                         "min_iterate >= B^2)", rich_help_panel=_OUTPUT)]
RouteOpt = Annotated[str | None, typer.Option(
    "--route", help="proof route: tight (head-average event, Cauchy-Schwarz drift; "
    "derivations.md §7.7) or paper (the paper's route, §7.1-7.5)", metavar="tight|paper",
    show_default="tight", rich_help_panel=_PARAMS)]
TargetOpt = Annotated[str, typer.Option("--target", help="the value to get under (> 0)",
                                        metavar="VALUE", rich_help_panel=_PARAMS,
                                        show_default=False)]


def _examples(*lines: str) -> str:
    """Epilog of a command: one runnable example per paragraph."""
    return "Examples:\n\n" + "\n\n".join(lines)


# --------------------------------------------------------------------------- shared helpers


def _check_format_flag(fmt: str, allowed: Sequence[str] = FORMATS) -> str:
    try:
        key = check_format(fmt)
    except ValueError as exc:
        raise InputError("--format", str(exc)) from None
    if key not in allowed:
        raise InputError("--format", f"must be one of {', '.join(allowed)} for this command, "
                                     f"got {fmt!r}")
    return key


def _check_precision(text: str | None) -> tuple[int, int | None]:
    """(mpmath digits, table digits or None for the default display)."""
    if text is None:
        return DEFAULT_PRECISION, None
    digits = parse_integer("--precision", text)
    if not 10 <= digits <= 1000:
        raise InputError("--precision", f"must be an integer between 10 and 1000, got {text!r}")
    return digits, min(digits, 17)


def _check_statement(name: str) -> str:
    key = str(name).strip().lower()
    if key not in STATEMENTS:
        raise InputError("STATEMENT", f"must be one of {', '.join(STATEMENTS)}, got {name!r}")
    return key


def _check_route(text: str | None, statement: str) -> str:
    """Registry key of ``statement`` on ``--route`` (None: the default, tight); the route is
    refused (exit 2) for a statement without one.

    Example:
        >>> _check_route("paper", "prop1"), _check_route(None, "lemma2")
        ('prop1_paper', 'lemma2')
    """
    if text is None:
        return statement
    route = str(text).strip().lower()
    if route not in ROUTES:
        raise InputError("--route", f"must be one of {', '.join(ROUTES)}, got {text!r}")
    if statement not in ROUTED:
        raise InputError("--route", f"is for {', '.join(ROUTED)} only, not {statement} (it has "
                                    f"one proof route)")
    return f"{statement}_paper" if route == "paper" else statement


def _check_target(text: str) -> float:
    value = parse_number("--target", text)
    if value <= 0:
        raise InputError("--target", f"must be > 0, got {text!r}")
    return value


def _given(**values: str | None) -> dict[str, str]:
    """The flags the user actually passed (None means 'use the default')."""
    return {k: v for k, v in values.items() if v is not None}


def _console_width(output: str | None) -> int:
    if output is None and sys.stdout.isatty():
        return max(shutil.get_terminal_size((110, 24)).columns, 60)
    return 110


def write_atomic(path: str, text: str | Iterable[str]) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``,
    so that readers never see a half-written file. ``text`` may be an iterable of pieces (streamed).
    Errors become :class:`InputError` (--output).

    Example:
        >>> import tempfile, os
        >>> target = os.path.join(tempfile.mkdtemp(), "out.txt")
        >>> write_atomic(target, "hello")
        >>> open(target).read()
        'hello\\n'
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        if target.is_dir():
            raise IsADirectoryError(21, "Is a directory")
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise InputError("--output", f"cannot write {path!r}: {exc.strerror or exc}") from None
    try:
        honour_umask(fd, tmp)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            last = ""
            for piece in [text] if isinstance(text, str) else text:
                if piece:
                    fh.write(piece)
                    last = piece
            if not last.endswith("\n"):
                fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError("--output", f"cannot write {path!r}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _emit(text: str | Iterable[str], output: str | None, what: str = "") -> None:
    if output is None:
        last = ""
        for piece in [text] if isinstance(text, str) else text:
            if piece:
                sys.stdout.write(piece)
                last = piece
        if not last.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
        return
    write_atomic(output, text)
    sys.stderr.write(f"wrote {output}{what}\n")


def _note(text: str) -> None:
    sys.stderr.write(text + "\n")


def _input_sources(statement: str, given: Mapping[str, str], inputs: Mapping[str, Any]
                   ) -> dict[str, str]:
    """Source of each shown input (given flag, default, η*, activation) and whether the statement
    uses it at all."""
    from boundcalc.api import compiled_statement

    st = compiled_statement(statement)
    used = st.used
    sources = {}
    for key in inputs:
        flag = INPUT_FLAGS.get(key)
        if flag is None:
            continue
        if key.startswith("sigma"):
            text = f"from --activation {inputs.get('activation', '')}"
        elif flag in given:
            text = f"given (--{flag.replace('_', '-')})"
        elif key == "eta" and inputs.get("eta_source") not in (None, "not used"):
            text = str(inputs["eta_source"])
        else:
            text = "default"
        if key not in ("activation", "eta") and key not in used:
            text += ", not used by this statement"
        if key == "eta" and "eta" not in used and not st.step:
            text += ", not used by this statement"
        sources[key] = text
    return sources


# --------------------------------------------------------------------------- symbolic


def _formula_tables(statement_name: str) -> dict[str, dict[str, Any]]:
    """Each constant / term / bound / probability, abbreviated in terms of the quantities listed
    before it, as ``{group: {key: {"unicode", "latex", "description"}}}``."""
    import sympy as sp

    from boundcalc.theory import symbols as S
    from boundcalc.theory.registry import get_statement

    st = get_statement(statement_name)
    base = {s: sp.Symbol(S.UNICODE_NAMES.get(s, s.name), positive=True) for s in S.ALL}
    base.update({s: sp.Symbol(s.name, positive=True) for s in S.GEOMETRY + (S.u0_max,)})
    table: dict[sp.Expr, sp.Expr] = {}
    latex_of: dict[sp.Symbol, str] = {}
    out: dict[str, dict[str, Any]] = {}
    groups = [("constants", st.constants), ("terms", st.terms), ("bound", st.bound),
              ("probability", {"probability": st.probability})]
    for group, exprs in groups:
        out[group] = {}
        for key, expr in exprs.items():
            expr = sp.sympify(expr)
            short = _abbreviate(expr, {k: v for k, v in table.items() if k != expr})
            unicode_expr = short.xreplace(base)
            out[group][key] = {
                "unicode": _unicode(unicode_expr),
                "latex": sp.latex(short, symbol_names=latex_of),
                "description": st.descriptions.get(key, ""),
            }
            if not expr.is_Atom and expr not in table:
                sym = sp.Symbol(QUANTITY_UNICODE.get(key, key), positive=True)
                latex_of[sym] = st.latex_names.get(key, rf"\mathrm{{{key}}}".replace("_", r"\_"))
                table[expr] = sym
                for power in (2, -1, -2):
                    table.setdefault(expr**power, sym**power)
    return out


def _abbreviate(expr: Any, table: Mapping[Any, Any]) -> Any:
    """Replace every sub-expression of ``expr`` found in ``table`` by its symbol; a sum (product)
    in the table also matches as a subset of the terms (factors) of a larger sum (product)."""
    memo: dict[Any, Any] = {}
    groups = sorted(((k, v) for k, v in table.items() if k.is_Add or k.is_Mul),
                    key=lambda kv: -len(kv[0].args))

    def walk(e: Any) -> Any:
        if e in memo:
            return memo[e]
        if e in table:
            memo[e] = table[e]
            return memo[e]
        if e.is_Atom or not e.args:
            return e
        args = list(e.args)
        found = []
        if e.is_Add or e.is_Mul:
            for full, sym in groups:
                if full.func is not e.func or len(full.args) > len(args):
                    continue
                rest = list(args)
                try:
                    for a in full.args:
                        rest.remove(a)
                except ValueError:
                    continue
                args = rest
                found.append(sym)
        result = e.func(*found, *[walk(a) for a in args])
        memo[e] = result
        return result

    return walk(expr)


def _unicode(expr: Any) -> str:
    """One-line Unicode text of a sympy expression (√, ·, ^)."""
    import sympy as sp

    text = sp.sstr(expr)
    return (text.replace("**", "^").replace("*", "·").replace("sqrt(", "√(")
            .replace("Piecewise(", "piecewise("))


def _tex_name(name: str) -> str:
    return name.replace("_", "\\_")


def _symbolic_block(statement_name: str, fmt: str) -> str:
    tables = _formula_tables(statement_name)
    if fmt == "markdown":
        lines = ["### Formulas", "", "Each in terms of the named quantities listed before it."]
        for group, items in tables.items():
            lines += ["", f"**{group}**", ""]
            for key, f in items.items():
                lines.append(f"- `{key}` = `{f['unicode']}`  ")
                lines.append(f"  $${f['latex']}$$")
        return "\n".join(lines)
    if fmt == "latex":
        lines = ["% Formulas, each in terms of the named quantities listed before it",
                 r"\begin{align*}"]
        rows = []
        for items in tables.values():
            for key, f in items.items():
                rows.append(rf"\text{{{_tex_name(key)}}}: &\quad {f['latex']}")
        lines.append(" \\\\\n".join(rows))
        lines.append(r"\end{align*}")
        return "\n".join(lines)
    lines = ["Formulas (each in terms of the named quantities listed before it)"]
    for group, items in tables.items():
        lines.append(f"  {group}")
        for key, f in items.items():
            name = QUANTITY_UNICODE.get(key, key)
            label = key if name == key else f"{key} ({name})"
            lines.append(f"    {label} = {f['unicode']}")
            lines.append(f"      LaTeX: {f['latex']}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- point evaluation


def with_verdict(name: str, result: Any, inputs: Any, precision: int,
                 search: Any = None) -> dict[str, Any]:
    """``result.to_dict()`` with, for a statement with the trivial bound B², the top-level keys
    ``verdict`` (:attr:`boundcalc.api.Evaluation.verdict`), ``nonvacuous_from_m`` (the smallest
    even m with min_iterate < B², every other input fixed: :func:`boundcalc.search.
    nonvacuous_width`; None if none up to 2^62) and ``active_drift_bound`` (tight route; else
    None), right after ``statement``. ``search``: a function of no argument giving that width
    (int or None) in place of :func:`boundcalc.search.nonvacuous_width` (prop2 at another α).

    Example:
        >>> from boundcalc.api import evaluate
        >>> inputs = validate(m=512, n=1000, rho="2")
        >>> data = with_verdict("theorem1_paper", evaluate("theorem1_paper", inputs), inputs, 20)
        >>> data["verdict"], data["nonvacuous_from_m"], data["active_drift_bound"]
        ('vacuous', 1712, None)
    """
    data = result.to_dict()
    over = data.pop("overflow", None)
    data.pop("verdict", None)
    if result.verdict is None:
        return data
    head: dict[str, Any] = {"statement": data.pop("statement"), "verdict": result.verdict}
    if over:
        head["overflow"] = over
    from boundcalc.api import has_verdict

    if has_verdict(name):
        from boundcalc.search import nonvacuous_width

        if over:
            head["nonvacuous_from_m"] = None
        elif search is not None:
            head["nonvacuous_from_m"] = search()
        else:
            answer = nonvacuous_width(name, inputs, precision)
            head["nonvacuous_from_m"] = None if answer is None else answer.m
        head["active_drift_bound"] = None if over else result.active_drift_bound
    return {**head, **data}


def _point(statement: str, given: dict[str, str], fmt: str, output: str | None, symbolic: bool,
           strict: bool, precision: str | None, route: str | None = None,
           alpha: str | None = None) -> None:
    """Evaluate ``statement`` (on ``route``; prop2 at Rademacher scale ``alpha``, default 3/2)
    at the validated point, render, write, exit."""
    fmt = _check_format_flag(fmt)
    digits, shown = _check_precision(precision)
    key = _check_route(route, statement)
    if symbolic and fmt in ("json", "csv"):
        raise InputError("--symbolic", f"works with --format table, markdown or latex (JSON and "
                                       f"CSV keep the data contract), got --format {fmt}")
    other_alpha = None
    if alpha is not None:  # prop2 only; the registered statement is alpha = 3/2
        from boundcalc.compare_rnn import is_default_alpha, parse_alpha

        if not is_default_alpha(alpha):
            other_alpha = parse_alpha(alpha)
            if symbolic:
                raise InputError("--symbolic", "shows the registered statement (alpha = 1.5); "
                                               f"drop it or --alpha {alpha}")
    inputs = validate(**given, statement=key)
    if other_alpha is not None:
        from boundcalc.compare_rnn import evaluate_prop2, nonvacuous_width_prop2

        result = evaluate_prop2(inputs, other_alpha, digits)
        data = with_verdict(key, result, inputs, digits, search=lambda: nonvacuous_width_prop2(
            inputs, other_alpha, digits))
    else:
        from boundcalc.api import evaluate

        result = evaluate(key, inputs, precision=digits)
        data = with_verdict(key, result, inputs, digits)
    st = result.statement
    shown_data = data
    if fmt == "table":  # eta's source is its own column there
        shown_data = {**data, "inputs": {k: v for k, v in data["inputs"].items()
                                         if k != "eta_source"}}
    sources = _input_sources(key, given, data["inputs"])
    if other_alpha is not None:
        sources["alpha"] = "given (--alpha)"
    text = render_result(shown_data, fmt, digits=shown, descriptions=st.descriptions,
                         sources=sources,
                         latex_names=st.latex_names, width=_console_width(output))
    if symbolic:
        text += "\n\n" + _symbolic_block(key, fmt)
    _emit(text, output)
    _finish(data, fmt, output, strict)


def _finish(data: Mapping[str, Any], fmt: str, output: str | None, strict: bool) -> None:
    """Print the status line on stderr when it is not in the output (not guaranteed or vacuous);
    with ``strict`` exit 1 unless the verdict is ``guaranteed`` (every condition holds where a
    result has no verdict)."""
    status = guarantee_line(data)
    guaranteed = status is None or status.startswith("GUARANTEED")
    if data.get("verdict") is not None:
        guaranteed = data["verdict"] == "guaranteed"
    if not guaranteed and (fmt != "table" or output is not None):
        _note(status or "NOT GUARANTEED")
    if strict and not guaranteed:
        raise typer.Exit(1)


_POINT_DOC = ("Evaluate {what} at one parameter point: inputs (defaults shown), constants, terms, "
              "bound, probability and each condition PASS/FAIL. A failing condition labels the "
              "result NOT GUARANTEED (exit 0, or 1 with --strict).")

_VERDICT_DOC = (
    "\n\nVerdict (JSON `verdict`, the table's status line): guaranteed (every condition holds "
    "and min_iterate < B², the trivial bound: R̂ ≤ B² for every θ), vacuous (every condition "
    "holds, min_iterate ≥ B²) or not_guaranteed (a condition fails); --strict exits 1 unless "
    "guaranteed. `nonvacuous_from_m` is the smallest even m with min_iterate < B², every other "
    "input fixed (η* recomputed per m unless --eta is given), null if none up to 2^62: a float64 "
    "grid (every even m up to 8192, then 64 widths per octave up to 2^62), bisection over the "
    "even integers between the last vacuous and the first non-vacuous grid width, then the exact "
    "mpmath evaluator confirms m non-vacuous and m − 2 vacuous. A quantity beyond the float "
    "range gives the verdict overflow (its exact value printed as text; JSON: a string, plus "
    "the list `overflow`).")

_ROUTE_DOC = (
    "\n\n--route tight (default) or paper: the proof route. The tight route (derivations.md "
    "§7.7) reports min_iterate = min(min_iterate_linear_drift, min_iterate_cauchy_schwarz) and "
    "names the active drift bound (JSON `active_drift_bound`); paper is the paper's route.")


def _point_examples(cmd: str, extra: str = "", route: bool = True) -> str:
    return _examples(
        f"boundcalc {cmd} --m 512 --n 1000 --rho 2{extra}",
        *([f"boundcalc {cmd} --m 512 --n 1000 --rho 2 --route paper   # vacuous"]
          if route else []),
        f"boundcalc {cmd} --m 512 --n 1000 --rho 2,3,1 --nu 1 --format json",
        f"boundcalc {cmd} --m 64 --rho 2 --activation erf --symbolic",
        f"boundcalc {cmd} --m 512 --rho 0.5 --nu 1 --strict   # not guaranteed: exit 1",
    )


def _routed_help(what: str) -> str:
    """``--help`` of a point command with a route and a verdict."""
    return _POINT_DOC.format(what=what) + _VERDICT_DOC + _ROUTE_DOC


@app.command(help=_routed_help("Theorem 1 (ProjGD)"),
             epilog=_point_examples("theorem1"),
             short_help="Theorem 1 (ProjGD): bounds on min_k R(theta_k) and the average iterate.")
def theorem1(m: MOpt = None, n: NOpt = None, d: DOpt = None, T: TOpt = None,
             delta: DeltaOpt = None, rho: RhoOpt = None, nu: NuOpt = None,
             steps: StepsOpt = None, eta: EtaOpt = None, activation: ActOpt = None,
             route: RouteOpt = None,
             precision: PrecOpt = None, format: FmtOpt = "table", output: OutOpt = None,
             symbolic: SymOpt = False, strict: StrictOpt = False) -> None:
    given = _given(m=m, n=n, d=d, T=T, delta=delta, rho=rho, nu=nu, steps=steps, eta=eta,
                   activation=activation)
    _point("theorem1", given, format, output, symbolic, strict, precision, route)


@app.command(help=_routed_help("Proposition 1 (ProjSGD, in expectation)"),
             epilog=_point_examples("prop1", " --batch-size 32"),
             short_help="Proposition 1 (ProjSGD, minibatch b): the bounds in expectation.")
def prop1(m: MOpt = None, n: NOpt = None, d: DOpt = None, T: TOpt = None,
          delta: DeltaOpt = None, rho: RhoOpt = None, nu: NuOpt = None,
          steps: StepsOpt = None, eta: EtaOpt = None, activation: ActOpt = None,
          batch_size: BatchOpt = None, route: RouteOpt = None,
          precision: PrecOpt = None, format: FmtOpt = "table", output: OutOpt = None,
          symbolic: SymOpt = False, strict: StrictOpt = False) -> None:
    given = _given(m=m, n=n, d=d, T=T, delta=delta, rho=rho, nu=nu, steps=steps, eta=eta,
                   activation=activation, batch_size=batch_size)
    _point("prop1", given, format, output, symbolic, strict, precision, route)


@app.command(help=_routed_help("Remark 9 (Theorem 1 with misspecified labels)"),
             epilog=_point_examples("remark9", " --misspecification 0.1"),
             short_help="Remark 9: Theorem 1 plus the misspecification term B·eps_mis.")
def remark9(m: MOpt = None, n: NOpt = None, d: DOpt = None, T: TOpt = None,
            delta: DeltaOpt = None, rho: RhoOpt = None, nu: NuOpt = None,
            steps: StepsOpt = None, eta: EtaOpt = None, activation: ActOpt = None,
            misspecification: MisOpt = None, route: RouteOpt = None,
            precision: PrecOpt = None, format: FmtOpt = "table", output: OutOpt = None,
            symbolic: SymOpt = False, strict: StrictOpt = False) -> None:
    given = _given(m=m, n=n, d=d, T=T, delta=delta, rho=rho, nu=nu, steps=steps, eta=eta,
                   activation=activation, misspecification=misspecification)
    _point("remark9", given, format, output, symbolic, strict, precision, route)


def _register_lemma(name: str, what: str) -> None:
    def command(m: MOpt = None, n: NOpt = None, d: DOpt = None, T: TOpt = None,
                delta: DeltaOpt = None, rho: RhoOpt = None, nu: NuOpt = None,
                steps: StepsOpt = None, eta: EtaOpt = None, activation: ActOpt = None,
                precision: PrecOpt = None, format: FmtOpt = "table", output: OutOpt = None,
                symbolic: SymOpt = False, strict: StrictOpt = False) -> None:
        given = _given(m=m, n=n, d=d, T=T, delta=delta, rho=rho, nu=nu, steps=steps, eta=eta,
                       activation=activation)
        _point(name, given, format, output, symbolic, strict, precision)

    command.__name__ = name
    doc = _POINT_DOC.format(what=what)
    app.command(name=name, help=doc, short_help=f"{what}.",
                epilog=_examples(f"boundcalc {name} --m 64 --rho 2",
                                 f"boundcalc {name} --m 4096 --d 16 --delta 0.01 --format json",
                                 f"boundcalc {name} --m 64 --symbolic"))(command)


for _name, _what in (("lemma2", "Lemma 2 (Lipschitz constant L and smoothness β)"),
                     ("lemma3", "Lemma 3 (linearization error ε_lin)"),
                     ("lemma5", "Lemma 5 (approximation error ε_app)"),
                     ("lemma6", "Lemma 6 (uniform envelopes)"),
                     ("event", "Definition 1 (event radius u_∞ of max_i ‖U_i(0)‖)")):
    _register_lemma(_name, _what)

AlphaOpt = Annotated[str | None, _opt("--alpha", metavar="A", default="1.5",
                                      help="Rademacher scale of the IndRNN's recurrent weights "
                                           "at init, u_i(0) = ±alpha (> 0; the authors' 3/2)")]


@app.command(help=_POINT_DOC.format(what="Proposition 2 (IndRNN ProjGD; grows with T past the "
                                         "cutoff σ₁α ≥ 1)") + _VERDICT_DOC
             + "\n\n--alpha (default 1.5 = 3/2, as compare-rnn and validate prop2): the recurrent "
               "scale; another alpha is evaluated exactly (mpmath) and its nonvacuous_from_m "
               "searched with that alpha (galloping, then bisection, exact).",
             short_help="Proposition 2 (IndRNN ProjGD, α = 3/2 or --alpha; grows with T past "
                        "the cutoff σ₁α ≥ 1).",
             epilog=_examples("boundcalc prop2 --m 64 --rho 2",
                              "boundcalc prop2 --m 512 --T 64 --alpha 0.5   # below the cutoff",
                              "boundcalc prop2 --m 4096 --d 16 --delta 0.01 --format json",
                              "boundcalc prop2 --m 64 --symbolic"))
def prop2(m: MOpt = None, n: NOpt = None, d: DOpt = None, T: TOpt = None,
          delta: DeltaOpt = None, rho: RhoOpt = None, nu: NuOpt = None,
          steps: StepsOpt = None, eta: EtaOpt = None, activation: ActOpt = None,
          alpha: AlphaOpt = None,
          precision: PrecOpt = None, format: FmtOpt = "table", output: OutOpt = None,
          symbolic: SymOpt = False, strict: StrictOpt = False) -> None:
    given = _given(m=m, n=n, d=d, T=T, delta=delta, rho=rho, nu=nu, steps=steps, eta=eta,
                   activation=activation)
    _point("prop2", given, format, output, symbolic, strict, precision, alpha=alpha)


# --------------------------------------------------------------------------- sweep

#: Sweep axes in row order: (axis, flag, kind). ``rho`` / ``nu`` are uniform axes (one value for
#: the three components); ``rho_c`` ... are per-component axes, present only when given.
_SWEEP_AXES: tuple[tuple[str, str, str], ...] = (
    ("m", "--m", "int"), ("n", "--n", "int"), ("d", "--d", "int"), ("T", "--T", "int"),
    ("delta", "--delta", "real"),
    ("rho", "--rho", "rho"), ("rho_c", "--rho-c", "rho"), ("rho_u", "--rho-u", "rho"),
    ("rho_w", "--rho-w", "rho"),
    ("nu", "--nu", "nu"), ("nu_c", "--nu-c", "nu"), ("nu_u", "--nu-u", "nu"),
    ("nu_w", "--nu-w", "nu"),
    ("K", "--steps", "int"), ("eta", "--eta", "real"), ("b", "--batch-size", "int"),
    ("epsilon_mis", "--misspecification", "real"),
)
_VALIDATE_KEY = {"m": "m", "n": "n", "d": "d", "T": "T", "delta": "delta", "K": "steps",
                 "eta": "eta", "b": "batch_size", "epsilon_mis": "misspecification",
                 "rho": "rho", "nu": "nu"}
#: Input columns of a sweep, in order.
_SWEEP_INPUTS = ("m", "n", "d", "T", "delta", "rho_c", "rho_u", "rho_w", "nu_c", "nu_u", "nu_w",
                 "K", "eta", "b", "epsilon_mis")

CompOpt = Annotated[str | None, typer.Option(help="one component; overrides --rho / --nu",
                                             metavar="NUM", rich_help_panel=_PARAMS,
                                             show_default=False)]
StatementArg = Annotated[str, typer.Argument(help=f"one of {', '.join(STATEMENTS)}",
                                             metavar="STATEMENT", show_default=False)]
ColumnsOpt = Annotated[str | None, typer.Option(
    "--columns", help="comma list of columns to keep (names or unique suffixes, e.g. "
    "m,n,min_iterate); default: all, or a compact set for --format table",
    rich_help_panel=_OUTPUT)]


def _check_sweep_value(axis: str, flag: str, kind: str, value: str) -> None:
    """Validate one distinct sweep value with the single-point rules of params.validate."""
    try:
        if kind in ("rho", "nu"):
            validate(**{kind: value}, eta="1")
        elif axis == "eta":
            validate(eta=value)
        else:
            validate(**{_VALIDATE_KEY[axis]: value}, eta="1")
    except InputError as exc:
        if exc.flag == flag:
            raise
        raise InputError(flag, str(exc)[len(exc.flag) + 1:]) from None


def _source_axis(column: str, axes: Mapping[str, Any]) -> str:
    """The axis a sweep input column takes its values from (rho_u from --rho-u, else --rho)."""
    if column in axes:
        return column
    if column[:-2] in ("rho", "nu") and column[:-2] in axes:
        return column[:-2]
    return column


def _sweep_axes(given: Mapping[str, str | None]) -> dict[str, tuple[str, str, str]]:
    """(spec, flag, kind) per axis: the flags given, else the defaults; the uniform --rho / --nu
    axis only when some component takes its value from it; η only when given (else η*)."""
    axes = {}
    for axis, flag, kind in _SWEEP_AXES:
        spec = given.get(axis)
        if axis in ("rho", "nu"):
            if all(given.get(f"{axis}_{c}") is not None for c in "cuw"):
                continue
            spec = spec if spec is not None else str(DEFAULTS[axis])
        elif spec is None and kind not in ("rho", "nu"):
            default = DEFAULTS[_VALIDATE_KEY[axis]]
            spec = None if default is None else str(default)
        if spec is not None:
            axes[axis] = (spec, flag, kind)
    return axes


def build_sweep(statement: str, given: Mapping[str, str | None], activation: str | None):
    """Validate the sweep flags and evaluate the grid; returns (DataFrame, swept columns).

    ``statement`` is a registry key (``theorem1_paper`` for the paper route). A statement with a
    proof route gets a constant ``route`` column, one with the trivial bound B² a ``verdict``
    column (categorical: guaranteed, vacuous, not_guaranteed; see
    :func:`boundcalc.api.verdict_column`).

    Example:
        >>> df, swept = build_sweep("theorem1", {"m": "8,16", "rho": "1,2"}, None)
        >>> len(df), swept, list(df["rho_u"])
        (4, ['m', 'rho_c', 'rho_u', 'rho_w'], [1.0, 2.0, 1.0, 2.0])
        >>> df, _ = build_sweep("theorem1", {"m": "8,4096", "rho": "0.5,3"}, None)
        >>> list(df["verdict"]), df["route"][0]
        (['not_guaranteed', 'vacuous', 'not_guaranteed', 'guaranteed'], 'tight')
    """
    from decimal import Decimal

    import numpy as np
    import pandas as pd

    from boundcalc.api import (
        OVERFLOW,
        VERDICTS,
        activation_values,
        compiled_statement,
        evaluate_grid,
        has_verdict,
        verdict_column,
    )
    from boundcalc.search import MAX_ROWS, parse_values

    st = compiled_statement(statement)
    specs = _sweep_axes(given)
    values: dict[str, list[str]] = {}
    for axis, (spec, flag, kind) in specs.items():
        values[axis] = parse_values(flag, spec)
        for v in values[axis]:
            _check_sweep_value(axis, flag, kind, v)
    rows = 1
    for vals in values.values():
        rows *= len(vals)
    if rows > MAX_ROWS:
        worst = max(values, key=lambda a: len(values[a]))
        sizes = " x ".join(f"{specs[a][1]} {len(v)}" for a, v in values.items() if len(v) > 1)
        raise InputError(specs[worst][1], f"makes the sweep {rows} rows ({sizes}), more than the "
                                          f"limit of {MAX_ROWS}; use fewer values")
    nu_sources = {_source_axis(f"nu_{c}", values) for c in "cuw"}
    if ("eta" not in values and st.step
            and all(any(Decimal(v) == 0 for v in values[a]) for a in nu_sources)):
        raise InputError("--nu", "needs a positive component in every row when --eta is not "
                                 "given (the theorem's step size is proportional to ||nu||)")
    act_name = validate(activation=activation or DEFAULTS["activation"], eta="1").activation
    sigmas = [float(v) for v in activation_values(act_name, 30)]
    axes = list(values)
    shape = tuple(len(values[a]) for a in axes)
    int_axes = {a for a, _, kind in _SWEEP_AXES if kind == "int"}
    grid: dict[str, Any] = {}
    int64_max = np.iinfo(np.int64).max
    for position, axis in enumerate(axes):
        exact = [int(Decimal(v)) if axis in int_axes else float(v) for v in values[axis]]
        as_int = axis in int_axes and all(abs(v) <= int64_max for v in exact)
        raw = np.array(exact if as_int else [float(v) for v in exact],
                       dtype=np.int64 if as_int else float)
        view = [1] * len(axes)
        view[position] = len(raw)
        grid[axis] = raw.reshape(view)
    columns: dict[str, Any] = {}
    for column in _SWEEP_INPUTS:
        source = _source_axis(column, grid)
        columns[column] = grid[source].astype(float) if source in grid else None
    columns.update(zip(("sigma0", "sigma1", "sigma2"), sigmas, strict=True))
    result = evaluate_grid(statement, columns)
    frame: dict[str, Any] = {}
    for column in _SWEEP_INPUTS:
        source = _source_axis(column, grid)
        data = grid[source] if source in grid else np.asarray(result[column], dtype=float)
        frame[column] = _flat(np.broadcast_to(data, shape))
    frame["activation"] = np.full(rows, act_name, dtype=object)
    for s, value in zip(("sigma0", "sigma1", "sigma2"), sigmas, strict=True):
        frame[s] = np.full(rows, value)
    if st.route:
        frame["route"] = np.full(rows, st.route, dtype=object)
    for group in ("constants", "terms", "bound"):
        for key in getattr(st, group):
            frame[f"{group}.{key}"] = _flat(result[f"{group}.{key}"])
    frame["probability"] = _flat(result["probability"])
    # float64 overflow of the grid evaluation (the inputs are finite): an explicit text cell
    outputs = [c for c in frame if c.startswith(("constants.", "terms.", "bound."))
               or c == "probability"]
    overflow = np.zeros(rows, dtype=bool)
    for column in outputs:
        bad = ~np.isfinite(frame[column])
        if bad.any():
            overflow |= bad
            cells = frame[column].astype(object)
            cells[bad] = OVERFLOW
            frame[column] = cells
    guaranteed = np.ones(rows, dtype=bool)
    for cond in st.conditions:
        holds = _flat(result[f"condition.{cond.name}"])
        frame[f"condition.{cond.name}"] = holds
        guaranteed &= holds
    frame["guaranteed"] = guaranteed
    if has_verdict(statement) or overflow.any():
        if has_verdict(statement):
            bound, trivial = (np.where(overflow, np.nan, frame[c]).astype(float)
                              for c in ("bound.min_iterate", "constants.trivial_bound_B2"))
            codes = verdict_column(guaranteed, bound, trivial)
        else:  # a statement without B²: the column appears only with an overflowing row
            codes = np.where(guaranteed, 0, 2).astype(np.int8)
        codes[overflow] = VERDICTS.index(OVERFLOW)
        frame["verdict"] = pd.Categorical.from_codes(codes, categories=list(VERDICTS))
    swept = [c for c in _SWEEP_INPUTS
             if _source_axis(c, grid) in values and len(values[_source_axis(c, grid)]) > 1]
    return pd.DataFrame(frame, copy=False), swept  # no copy: the columns are fresh arrays


def _flat(array: Any) -> Any:
    """One row per grid point, as an array the DataFrame owns (evaluate_grid returns read-only
    broadcast views)."""
    flat = array.reshape(-1)
    return flat if flat.flags.writeable and flat.base is None else flat.copy()


def _select_columns(df: Any, spec: str | None, fmt: str, swept: Sequence[str]) -> list[str]:
    names = [str(c) for c in df.columns]
    if spec is None:
        if fmt != "table":
            return names
        keep = list(swept) or ["m"]
        keep += [c for c in names if c.startswith(("terms.", "bound."))]
        return keep + ["probability", "guaranteed"] + (["verdict"] if "verdict" in names else [])
    chosen = []
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            continue
        if item in names:
            chosen.append(item)
            continue
        matches = [c for c in names if c.split(".")[-1] == item]
        if len(matches) != 1:
            hint = "ambiguous" if matches else "unknown"
            raise InputError("--columns", f"{hint} column {item!r}; choose from "
                                          f"{', '.join(names)}")
        chosen.append(matches[0])
    if not chosen:
        raise InputError("--columns", "must name at least one column")
    return list(dict.fromkeys(chosen))


_SWEEP_HELP = (
    "Evaluate STATEMENT over a grid: one row per combination of the values given.\n\n"
    "Every numeric flag takes a value, a comma list (1e3,1e6), an additive range "
    "start:stop:step or a geometric range start:stop:xF (stop included when a step lands "
    "on it). In a sweep, --rho and --nu list uniform values (each applied to all three "
    "components); sweep one component with --rho-c/--rho-u/--rho-w, --nu-c/--nu-u/--nu-w. "
    "Rows: inputs, every constant, term and bound, the probability, each condition and "
    "`guaranteed`; numpy float64 evaluation.\n\n"
    "theorem1, prop1, remark9 and prop2 also get a `verdict` column: guaranteed (every "
    "condition holds and min_iterate < B², the trivial bound), vacuous (min_iterate ≥ B²) or "
    "not_guaranteed (a condition fails), or overflow (a value beyond the float64 range: the "
    "cell says overflow; other statements get the column only then); --strict exits 1 unless "
    "every row is guaranteed. "
    "--route tight|paper (theorem1, prop1, remark9 only; default tight) picks the proof route, "
    "named in the `route` column and the title."
)


@app.command(help=_SWEEP_HELP,
             short_help="Evaluate a statement over a grid of parameters (lists, ranges).",
             epilog=_examples(
    "boundcalc sweep theorem1 --m 8:4096:x2 --n 1e3,1e6 --format csv --output sweep.csv",
    "boundcalc sweep theorem1 --m 512,1024 --steps 1000:5000:1000",
    "boundcalc sweep lemma3 --m 64:1024:x2 --rho-u 1,2,4 --format markdown",
    "boundcalc sweep prop1 --m 1024 --batch-size 1,8,64 --columns m,b,min_iterate",
    "boundcalc sweep theorem1 --m 256:65536:x2 --route paper --columns m,min_iterate,verdict"))
def sweep(
    statement: StatementArg,
    m: MOpt = None, n: NOpt = None, d: DOpt = None, T: TOpt = None, delta: DeltaOpt = None,
    rho: RhoOpt = None, nu: NuOpt = None,
    rho_c: CompOpt = None, rho_u: CompOpt = None, rho_w: CompOpt = None,
    nu_c: CompOpt = None, nu_u: CompOpt = None, nu_w: CompOpt = None,
    steps: StepsOpt = None, eta: EtaOpt = None, activation: ActOpt = None,
    batch_size: BatchOpt = None, misspecification: MisOpt = None, route: RouteOpt = None,
    format: FmtOpt = "table", output: OutOpt = None, columns: ColumnsOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Evaluate a statement over a grid of parameters (lists, ranges).

    ``--help`` shows :data:`_SWEEP_HELP`.
    """
    name = _check_statement(statement)
    key = _check_route(route, name)
    fmt = _check_format_flag(format)
    given = {"m": m, "n": n, "d": d, "T": T, "delta": delta, "rho": rho, "nu": nu,
             "rho_c": rho_c, "rho_u": rho_u, "rho_w": rho_w, "nu_c": nu_c, "nu_u": nu_u,
             "nu_w": nu_w, "K": steps, "eta": eta, "b": batch_size,
             "epsilon_mis": misspecification}
    df, swept = build_sweep(key, given, activation)
    keep = _select_columns(df, columns, fmt, swept)
    label = f"{name} ({df['route'].iloc[0]} route)" if "route" in df.columns else name
    title = f"{label}: {len(df)} rows" if fmt in ("table", "markdown", "latex") else None
    shown = df[keep]
    if fmt == "table":  # short headers (terms.optimization -> optimization) where unambiguous
        short = [c.split(".")[-1] for c in keep]
        if len(set(short)) == len(short):
            shown = shown.set_axis(short, axis=1)
    text = (iter_frame(shown, fmt) if fmt in ("csv", "json")
            else render_frame(shown, fmt, title=title))
    _emit(text, output, f" ({len(df)} rows)")
    failed = int((~df["guaranteed"]).sum())
    if failed:
        _note(f"NOT GUARANTEED in {failed} of {len(df)} rows (see the condition.* columns)")
    vacuous = int((df["verdict"] == "vacuous").sum()) if "verdict" in df.columns else 0
    if vacuous:
        _note(f"VACUOUS in {vacuous} of {len(df)} rows (min_iterate ≥ B²; see the verdict column)")
    over = int((df["verdict"] == "overflow").sum()) if "verdict" in df.columns else 0
    if over:
        _note(f"OVERFLOW in {over} of {len(df)} rows (a value exceeds the float64 range; no bound "
              f"is guaranteed there; see the verdict column)")
    if strict and (failed or vacuous or over):
        raise typer.Exit(1)


# --------------------------------------------------------------------------- width / steps


def _solver_header(name: str, title: str, summary: str, guaranteed: bool, precision: int,
                   route: str = "") -> dict[str, Any]:
    return {"name": name, "title": title, "summary": summary, "guaranteed": guaranteed,
            "route": route or None, "precision_digits": precision}


def _solver_result(header: dict[str, Any], inputs: dict[str, Any], answer: dict[str, Any],
                   conditions: list[dict[str, Any]], evaluation: Any,
                   extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A solver's JSON: statement, the active drift bound at the answer (tight route; None on
    the paper route), ``extra`` top-level keys, inputs, answer, conditions, version."""
    return {"statement": header, **(extra or {}),
            "active_drift_bound": evaluation.active_drift_bound, "inputs": inputs,
            "answer": answer, "conditions": conditions, "version": __version__}


_WIDTH_HELP = (
    "Smallest even width m whose width terms of Theorem 1, B·ε_lin + B·ε_app + B·ε_cf "
    "(B·ε_tay for B·ε_lin on the tight route), are at most --target; or, with --nonvacuous, the "
    "smallest even m at which Theorem 1's bound is non-vacuous, min_iterate < B².\n\n"
    "--target: doubling from m = 2 to a feasible width, then bisection over even m (the answer "
    "meets the target and m − 2 does not); both are re-checked with the exact evaluator "
    "and reported. Exit 1 if no m up to 2^62 meets the target.\n\n"
    "--nonvacuous: every other input fixed (η* recomputed per m unless --eta is given); a "
    "float64 grid (every even m up to 8192, then 64 widths per octave up to 2^62), bisection over "
    "the even integers between the last vacuous and the first non-vacuous grid width, then the "
    "exact mpmath evaluator confirms m non-vacuous and m − 2 vacuous (the same search as the "
    "point commands' nonvacuous_from_m). Exit 1 if no m up to 2^62 is non-vacuous.\n\n"
    "--route tight (default) or paper: the proof route of Theorem 1."
)


def _smallest_verified(exact: Any, start: int, step: int, goal: Any
                       ) -> tuple[int, Any, Any, Any]:
    """Re-check a solver's answer with the exact (mpmath) evaluator: move up by ``step`` until the
    value meets ``goal``, then down while the next smaller candidate still meets it (the float
    search and the exact evaluation disagree only at ~1e-15 of the target, so 16 moves suffice).

    ``exact(x)`` returns (evaluation, value). Returns (x, evaluation, value, value at x − step or
    None when x is the smallest candidate, ``step``).
    """
    found = start
    ev, value = exact(found)
    for _ in range(16):
        if value <= goal:
            break
        found += step
        ev, value = exact(found)
    previous = None
    for _ in range(16):
        if found <= step:
            break
        previous = exact(found - step)[1]
        if previous > goal:
            break
        found -= step
        ev, value = exact(found)
    return found, ev, value, previous


def _vs(value: Any, goal: float) -> str:
    """``value`` with 12 significant digits, or as many more as it takes for the shown number
    to compare with ``goal`` as ``value`` does (no "0.1 > 0.1")."""
    import mpmath

    exact, aim = mpmath.mpf(value), mpmath.mpf(goal)
    want = (exact > aim) - (exact < aim)
    for digits in range(12, 60):
        text = mpmath.nstr(exact, digits)
        shown = mpmath.mpf(text)
        if (shown > aim) - (shown < aim) == want:
            return text
    return mpmath.nstr(exact, 60)


@app.command(help=_WIDTH_HELP,
             short_help="Smallest even width m that brings the width terms under --target, or "
                        "makes the bound non-vacuous.",
             epilog=_examples(
    "boundcalc width --target 0.1 --n 1e6",
    "boundcalc width --target 1 --n 1000 --rho 2 --nu 1 --d 4 --format json",
    "boundcalc width --target 0.5 --activation erf --delta 0.01",
    "boundcalc width --nonvacuous --n 1000 --rho 2 --route paper"))
def width(target: Annotated[str | None, typer.Option(
              "--target", help="the value to get under (> 0); or give --nonvacuous",
              metavar="VALUE", rich_help_panel=_PARAMS, show_default=False)] = None,
          nonvacuous: Annotated[bool, typer.Option(
              "--nonvacuous", help="solve for the smallest even m with min_iterate < B^2 "
              "instead of a --target", rich_help_panel=_PARAMS)] = False,
          n: NOpt = None, d: DOpt = None, T: TOpt = None,
          delta: DeltaOpt = None, rho: RhoOpt = None, nu: NuOpt = None,
          steps: StepsOpt = None, eta: EtaOpt = None, activation: ActOpt = None,
          route: RouteOpt = None,
          precision: PrecOpt = None, format: FmtOpt = "table", output: OutOpt = None,
          strict: StrictOpt = False) -> None:
    """Smallest even width m that brings the width terms under --target (or, with --nonvacuous,
    makes the bound non-vacuous).

    ``--help`` shows :data:`_WIDTH_HELP`.
    """
    import mpmath

    from boundcalc.api import evaluate
    from boundcalc.search import (
        MAX_WIDTH,
        WIDTH_TERMS,
        point_arguments,
        refuse_overflow,
        solve_width,
        width_terms,
    )

    fmt = _check_format_flag(format)
    digits, shown = _check_precision(precision)
    key = _check_route(route, "theorem1")
    if nonvacuous and target is not None:
        raise InputError("--nonvacuous", "cannot be combined with --target (give one of them)")
    if not nonvacuous and target is None:
        raise InputError("--target", "is required (or give --nonvacuous)")
    given = _given(n=n, d=d, T=T, delta=delta, rho=rho, nu=nu, steps=steps, eta=eta,
                   activation=activation)
    inputs = validate(**given, statement=key)
    if nonvacuous:
        _width_nonvacuous(key, inputs, given, digits, shown, fmt, output, strict)
        return
    goal = _check_target(str(target))
    search_digits = max(digits, 30)
    args = point_arguments(inputs, search_digits)
    answer = solve_width(lambda w: width_terms(key, args, w, search_digits), goal)
    if answer is None:
        refuse_overflow(key, given, evaluate(key, replace(inputs, m=MAX_WIDTH), precision=digits),
                        digits, m=MAX_WIDTH)
        top = width_terms(key, args, MAX_WIDTH, search_digits)
        _note(f"infeasible: no even m <= 2^62 meets --target {target} (the width terms are "
              f"{top:.6g} at m = 2^62)")
        raise typer.Exit(1)

    def exact(w: int) -> tuple[Any, Any]:
        ev = evaluate(key, replace(inputs, m=w), precision=digits)
        return ev, mpmath.fsum(ev.terms[k] for k in WIDTH_TERMS)

    m_found, ev, value, previous = _smallest_verified(exact, answer.m, 2, goal)
    refuse_overflow(key, given, ev, digits, m=m_found)
    data = ev.to_dict()
    route_name = data["statement"]["route"] or ""
    terms_text = f"B·({'ε_tay' if route_name == 'tight' else 'ε_lin'} + ε_app + ε_cf)"
    inputs_shown = {k: v for k, v in data["inputs"].items() if k != "m"}
    inputs_shown["target"] = goal
    prev_holds = m_found == 2 or (previous is not None and previous > goal)
    conditions = [
        {"name": "meets_target", "holds": bool(value <= goal),
         "detail": f"{terms_text} = {_vs(value, goal)} <= {goal!r} at m = {m_found}"},
        {"name": "m_minus_2_misses_target", "holds": bool(prev_holds),
         "detail": ("m = 2 is the smallest even width" if m_found == 2 else
                    f"{terms_text} = {_vs(previous, goal)} > {goal!r} at "
                    f"m = {m_found - 2}")},
        *data["conditions"],
    ]
    answer_section = {
        "m": m_found,
        "width_terms": float(value),
        "width_terms_at_m_minus_2": None if previous is None else float(previous),
        **{k: data["terms"][k] for k in WIDTH_TERMS},
        "min_iterate_at_m": data["bound"]["min_iterate"],
        "widths_evaluated": answer.evaluations,
    }
    header = _solver_header(
        "width", "Smallest even width m for the width terms of Theorem 1",
        f"Smallest even m with {terms_text} <= target (doubling, then bisection over even m; "
        f"re-checked with the exact evaluator at m and m − 2).",
        all(c["holds"] for c in conditions), digits, route_name)
    result = _solver_result(header, inputs_shown, answer_section, conditions, ev)
    _render_solver(result, fmt, output, shown, strict, key)


def _width_nonvacuous(key: str, inputs: Any, given: Mapping[str, str], digits: int,
                      shown: int | None, fmt: str, output: str | None, strict: bool) -> None:
    """``width --nonvacuous``: the smallest even m with min_iterate < B² (Theorem 1 on the route
    of ``key``), rendered like ``width --target``."""
    import mpmath

    from boundcalc.api import TRIVIAL_KEY, VERDICT_BOUND, evaluate
    from boundcalc.search import MAX_WIDTH, nonvacuous_width, refuse_overflow

    answer = nonvacuous_width(key, inputs, digits)
    if answer is None:
        top = evaluate(key, replace(inputs, m=MAX_WIDTH), precision=digits)
        refuse_overflow(key, given, top, digits, m=MAX_WIDTH)
        _note(f"infeasible: no even m <= 2^62 makes the bound non-vacuous (min_iterate = "
              f"{mpmath.nstr(top.bound[VERDICT_BOUND], 6)} >= B^2 = "
              f"{mpmath.nstr(top.constants[TRIVIAL_KEY], 6)} at m = 2^62)")
        raise typer.Exit(1)
    ev, prev, m_found = answer.evaluation, answer.previous, answer.m
    refuse_overflow(key, given, ev, digits, m=m_found)
    value, trivial = ev.bound[VERDICT_BOUND], ev.constants[TRIVIAL_KEY]  # type: ignore[attr-defined]
    data = ev.to_dict()  # type: ignore[attr-defined]
    inputs_shown = {k: v for k, v in data["inputs"].items() if k != "m"}
    conditions = [
        {"name": "non_vacuous_at_m", "holds": bool(value < trivial),
         "detail": f"min_iterate = {mpmath.nstr(value, 12)} < B² = {mpmath.nstr(trivial, 12)} "
                   f"at m = {m_found}"},
    ]
    if prev is None:
        conditions.append({"name": "m_minus_2_vacuous", "holds": True,
                           "detail": "m = 2 is the smallest even width"})
    else:
        p_value, p_trivial = prev.bound[VERDICT_BOUND], prev.constants[TRIVIAL_KEY]  # type: ignore[attr-defined]
        conditions.append({"name": "m_minus_2_vacuous", "holds": bool(not p_value < p_trivial),
                           "detail": f"min_iterate = {mpmath.nstr(p_value, 12)} >= B² = "
                                     f"{mpmath.nstr(p_trivial, 12)} at m = {m_found - 2}"})
    conditions += data["conditions"]
    answer_section = {
        "m": m_found,
        "min_iterate": float(value),
        "trivial_bound_B2": float(trivial),
        "min_iterate_at_m_minus_2": None if prev is None else float(p_value),
        "trivial_bound_B2_at_m_minus_2": None if prev is None else float(p_trivial),
        "average_iterate_at_m": data["bound"]["average_iterate"],
        "eta": data["inputs"]["eta"],
        "eta_source": data["inputs"]["eta_source"],
        "grid_widths_evaluated": answer.grid_points,
        "exact_evaluations": answer.exact_evaluations,
    }
    route_name = data["statement"]["route"] or ""
    header = _solver_header(
        "width", "Smallest even width m at which Theorem 1's bound is non-vacuous",
        "Smallest even m with min_iterate < B² (the trivial bound), every other input fixed: a "
        "float64 grid (every even m up to 8192, then 64 per octave up to 2^62), bisection between "
        "the last vacuous and the first non-vacuous grid width, confirmed with the exact "
        "evaluator at m (non-vacuous) and m − 2 (vacuous).",
        all(c["holds"] for c in conditions), digits, route_name)
    result = _solver_result(header, inputs_shown, answer_section, conditions, ev,
                            {"nonvacuous_from_m": m_found})
    _render_solver(result, fmt, output, shown, strict, key)


_STEPS_HELP = (
    "Smallest number of steps K whose optimization term of Theorem 1 is at most --target.\n\n"
    "At the theorem's step size η* = ‖ν‖/(2LB√K) the term is ‖ν‖LB/√K, so K = "
    "⌈(‖ν‖LB/target)²⌉; at a fixed --eta it is ‖ν‖²/(4ηK) + ηL²B², reachable only if "
    "ηL²B² < target (else exit 1). K and K − 1 are re-checked with the exact evaluator.\n\n"
    "--route tight (default) or paper: the proof route of Theorem 1 (L and B are the route's)."
)


@app.command(help=_STEPS_HELP,
             short_help="Number of steps K that brings the optimization term under --target.",
             epilog=_examples(
    "boundcalc steps --target 0.1 --m 4096",
    "boundcalc steps --target 1 --m 512 --eta 1e-5",
    "boundcalc steps --target 0.5 --m 1024 --rho 2 --nu 1 --format json",
    "boundcalc steps --target 0.1 --m 4096 --route paper"))
def steps(target: TargetOpt, m: MOpt = None, n: NOpt = None, d: DOpt = None, T: TOpt = None,
          delta: DeltaOpt = None, rho: RhoOpt = None, nu: NuOpt = None,
          eta: EtaOpt = None, activation: ActOpt = None, route: RouteOpt = None,
          precision: PrecOpt = None,
          format: FmtOpt = "table", output: OutOpt = None, strict: StrictOpt = False) -> None:
    """Number of steps K that brings the optimization term under --target.

    ``--help`` shows :data:`_STEPS_HELP`.
    """
    from boundcalc.api import evaluate
    from boundcalc.search import refuse_overflow, solve_steps

    fmt = _check_format_flag(format)
    digits, shown = _check_precision(precision)
    key = _check_route(route, "theorem1")
    goal = _check_target(target)
    given = _given(m=m, n=n, d=d, T=T, delta=delta, rho=rho, nu=nu, eta=eta,
                   activation=activation)
    inputs = validate(**given, statement=key)
    base = evaluate(key, inputs, precision=digits)
    refuse_overflow(key, given, base, digits)
    c = base.constants
    answer = solve_steps(c["transport_norm"], c["lipschitz_L"], c["residual_envelope_B"],
                         target.strip(), eta=inputs.eta, precision=digits + 10)
    if answer.steps is None:
        _note(f"infeasible: no K meets --target {target} at --eta {inputs.eta}: {answer.reason}; "
              f"omit --eta to use eta* (every target is then reachable)")
        raise typer.Exit(1)

    def exact(k: int) -> tuple[Any, Any]:
        ev = evaluate(key, replace(inputs, steps=k), precision=digits)
        return ev, ev.terms["optimization"]

    k_found, ev, value, previous = _smallest_verified(exact, answer.steps, 1, goal)
    refuse_overflow(key, given, ev, digits, steps=k_found)
    data = ev.to_dict()
    inputs_shown = {k: v for k, v in data["inputs"].items() if k != "K"}
    inputs_shown["target"] = goal
    prev_holds = k_found == 1 or (previous is not None and previous > goal)
    conditions = [
        {"name": "meets_target", "holds": bool(value <= goal),
         "detail": f"optimization term = {_vs(value, goal)} <= {goal!r} at K = {k_found}"},
        {"name": "k_minus_1_misses_target", "holds": bool(prev_holds),
         "detail": ("K = 1 is the smallest" if k_found == 1 else
                    f"optimization term = {_vs(previous, goal)} > {goal!r} at "
                    f"K = {k_found - 1}")},
        *data["conditions"],
    ]
    answer_section = {
        "K": k_found,
        "optimization_term": float(value),
        "optimization_term_at_K_minus_1": None if previous is None else float(previous),
        "eta": data["inputs"]["eta"],
        "eta_source": data["inputs"]["eta_source"],
        "transport_norm": data["constants"]["transport_norm"],
        "lipschitz_L": data["constants"]["lipschitz_L"],
        "residual_envelope_B": data["constants"]["residual_envelope_B"],
        "min_iterate_at_K": data["bound"]["min_iterate"],
    }
    header = _solver_header(
        "steps", "Number of steps K for the optimization term of Theorem 1",
        "Smallest K with optimization term <= target: K = ceil((||nu|| L B / target)^2) at "
        "eta*, or ceil(||nu||^2 / (4 eta (target - eta L^2 B^2))) at a fixed eta; re-checked "
        "with the exact evaluator at K and K − 1.",
        all(c["holds"] for c in conditions), digits, data["statement"]["route"] or "")
    result = _solver_result(header, inputs_shown, answer_section, conditions, ev)
    _render_solver(result, fmt, output, shown, strict, key)


def _render_solver(result: dict[str, Any], fmt: str, output: str | None, shown: int | None,
                   strict: bool, key: str) -> None:
    from boundcalc.api import compiled_statement

    st = compiled_statement(key)
    text = render_result(result, fmt, digits=shown or SOLVER_DIGITS, descriptions=st.descriptions,
                         latex_names=st.latex_names, width=_console_width(output))
    _emit(text, output)
    _finish(result, fmt, output, strict)


# --------------------------------------------------------------------------- explain


def explain_data(statement: str) -> dict[str, Any]:
    """Title, proof route (None where there is one), summary, glossary of the symbols used,
    formulas and conditions of ``statement`` (a registry key: ``theorem1_paper`` for the paper
    route).

    Example:
        >>> sorted(explain_data("lemma3"))
        ['conditions', 'formulas', 'route', 'statement', 'summary', 'symbols', 'title']
        >>> explain_data("prop1_paper")["route"]
        'paper'
    """
    import sympy as sp

    from boundcalc.theory import symbols as S
    from boundcalc.theory.registry import get_statement

    st = get_statement(statement)
    used = st.free_symbols()
    symbols = {
        s.name: {"unicode": S.UNICODE_NAMES.get(s, s.name), "latex": sp.latex(s),
                 "meaning": S.GLOSSARY.get(s, "")}
        for s in (*S.ALL, *S.GEOMETRY, S.u0_max) if s in used
    }
    conditions = [{"name": c.name, "requirement": c.requirement, "why": c.why,
                   "latex": sp.latex(c.relation)} for c in st.conditions]
    return {"statement": st.name, "title": st.title, "route": st.route or None,
            "summary": st.summary, "symbols": symbols, "formulas": _formula_tables(statement),
            "conditions": conditions}


def _explain_text(info: Mapping[str, Any], fmt: str) -> str:
    if fmt == "json":
        import json

        return json.dumps(info, indent=2, ensure_ascii=False)
    formulas = info["formulas"]
    route = f"route: {info['route']}" if info.get("route") else ""
    if fmt == "markdown":
        lines = [f"## {info['title']}", ""]
        lines += [f"**route**: {info['route']}", ""] if route else []
        lines += [info["summary"], "", "### Symbols", "", "| symbol | meaning |", "|---|---|"]
        lines += [f"| {s['unicode']} | {s['meaning']} |" for s in info["symbols"].values()]
        lines += ["", "### Formulas", "", "Each in terms of the named quantities listed before it."]
        for group, items in formulas.items():
            lines += ["", f"**{group}**", ""]
            for key, f in items.items():
                desc = f" — {f['description']}" if f["description"] else ""
                lines += [f"- `{key}`{desc}", f"  - `{f['unicode']}`", f"  - $${f['latex']}$$"]
        lines += ["", "### Conditions", ""]
        lines += [f"- `{c['requirement']}` ({c['name']}): {c['why']}" for c in info["conditions"]]
        return "\n".join(lines)
    if fmt == "latex":
        lines = [f"% {latex_text(info['title'])}: {latex_text(info['summary'])}"]
        lines += [f"% {route}"] if route else []
        lines += [r"\begin{align*}"]
        rows = []
        for items in formulas.values():
            for key, f in items.items():
                rows.append(rf"\text{{{_tex_name(key)}}}: &\quad {f['latex']}")
        rows += [rf"\text{{{_tex_name(c['name'])}}}: &\quad {c['latex']}"
                 for c in info["conditions"]]
        lines += [" \\\\\n".join(rows), r"\end{align*}"]
        return "\n".join(lines)
    lines = [info["title"], *([route] if route else []), "", info["summary"], "", "Symbols"]
    width = max((len(s["unicode"]) for s in info["symbols"].values()), default=1)
    lines += [f"  {s['unicode']:<{width}}  {s['meaning']}" for s in info["symbols"].values()]
    lines += ["", "Formulas (each in terms of the named quantities listed before it)"]
    for group, items in formulas.items():
        lines.append(f"  {group}")
        for key, f in items.items():
            name = QUANTITY_UNICODE.get(key, key)
            label = key if name == key else f"{key} ({name})"
            if f["description"]:
                lines.append(f"    {label}: {f['description']}")
            else:
                lines.append(f"    {label}")
            lines.append(f"      = {f['unicode']}")
            lines.append(f"      LaTeX: {f['latex']}")
    lines += ["", "Conditions (the bound is guaranteed only when all hold)"]
    lines += [f"  {c['name']}: {c['requirement']} — {c['why']}" for c in info["conditions"]]
    return "\n".join(lines)


_EXPLAIN_HELP = (
    "Explain STATEMENT: title, summary, glossary of its symbols, every formula (Unicode "
    "and LaTeX) and every condition with the reason the derivation needs it. --route tight "
    "(default) or paper picks the proof route of theorem1, prop1 and remark9."
)


@app.command(help=_EXPLAIN_HELP,
             short_help="Statement, symbol glossary, formulas (Unicode, LaTeX), conditions.",
             epilog=_examples("boundcalc explain theorem1",
                              "boundcalc explain lemma5 --format markdown",
                              "boundcalc explain prop1 --format json --output prop1.json",
                              "boundcalc explain theorem1 --route paper"))
def explain(
    statement: StatementArg,
    route: RouteOpt = None,
    format: Annotated[str, typer.Option("--format", "-f", help="table, json, markdown or latex",
                                        rich_help_panel=_OUTPUT)] = "table",
    output: OutOpt = None,
) -> None:
    """Statement, symbol glossary, formulas (Unicode, LaTeX), conditions.

    ``--help`` shows :data:`_EXPLAIN_HELP`.
    """
    name = _check_statement(statement)
    key = _check_route(route, name)
    fmt = _check_format_flag(format, ("table", "json", "markdown", "latex"))
    _emit(_explain_text(explain_data(key), fmt), output)


# --------------------------------------------------------------------------- other modules


def _register_other_commands() -> None:
    """``generalization`` (paper 003), ``validate``, ``reproduce``, ``compare-rnn`` and
    ``table``: their modules import torch / the second statement family only when a command
    runs (``table`` never does)."""
    from boundcalc.cli_generalization import generalization
    from boundcalc.cli_table import register as register_table
    from boundcalc.cli_validate import register

    app.command("generalization",
                short_help="Paper 003 (Theorem 5): true-loss generalization bound.")(generalization)
    register(app)
    register_table(app)


_register_other_commands()


# --------------------------------------------------------------------------- entry point


def _version_callback(value: bool) -> None:
    if value:
        sys.stdout.write(f"boundcalc {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", help="print the version and exit",
                                                callback=_version_callback,
                                                is_eager=True)] = False) -> None:
    """Bound calculator for the finite-time theory of gradient descent on shallow Transformers."""


def _click_exceptions() -> Any:
    try:  # typer >= 0.2x vendors click
        from typer._click import exceptions
    except ImportError:  # pragma: no cover - older typer with click installed
        from click import exceptions
    return exceptions


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 not guaranteed with --strict or infeasible
    target, 2 bad input, 3 internal error). Every error is one line on stderr, never a traceback
    (``BOUNDCALC_DEBUG=1`` re-raises internal errors).

    Example:
        >>> main(["theorem1", "--m", "3"])
        2
    """
    exc = _click_exceptions()
    args = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):  # never crash on a terminal that cannot show ρ, δ, ≤
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    try:
        code = app(args=args, prog_name="boundcalc", standalone_mode=False)
    except InputError as err:
        _note(f"error: {_one_line(str(err))}")
        return 2
    except exc.NoArgsIsHelpError as err:
        sys.stdout.write(err.format_message().rstrip("\n") + "\n")
        return 0
    except exc.UsageError as err:
        _note(f"error: {_one_line(err.format_message())} (see boundcalc --help)")
        return 2
    except exc.ClickException as err:
        _note(f"error: {_one_line(err.format_message())}")
        return int(getattr(err, "exit_code", 1) or 1)
    except typer.Exit as err:
        return int(getattr(err, "exit_code", 0) or 0)
    except (typer.Abort, KeyboardInterrupt):
        _note("aborted")
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except Exception as err:  # a bug, not bad input: still one line unless debugging
        if os.environ.get("BOUNDCALC_DEBUG"):
            raise
        _note(f"error: internal error {type(err).__name__}: {_one_line(str(err))} "
              f"(set BOUNDCALC_DEBUG=1 for the traceback)")
        return 3
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
