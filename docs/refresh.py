"""The numbers of README.md and docs/*.md that a ``boundcalc`` command prints, regenerated and
checked, so that the documentation cannot drift from the code.

Three kinds of marker (HTML comments: invisible on a rendered page) say where a number comes from:

* a **numbers** marker before a paragraph, table or list item names one command and, one per
  line, a key into its output and the text around the number in the paragraph that follows the
  marker (up to the next blank line), ``{}`` standing for the number::

      <!-- numbers: boundcalc theorem1 --m 512 --n 1000 --rho 2 --format json
      bound.min_iterate: VACUOUS: min_iterate {} ≥
      nonvacuous_from_m: informative from m = {} for
      -->

  The key is a dotted path into the command's JSON (``rows.-1.x`` indexes a list; ``*`` maps over
  one, and ``min(…)`` / ``max(…)`` reduce it), or ``/REGEX/`` whose first group is read from the
  text output. In a Markdown table, the text ``row LABEL column K`` names the cell instead (column
  1 holds the row's label), and ``column K`` with a path holding ``*`` the whole column, one value
  per data row. A value that is not a number (a verdict) is compared as a word. The number is
  checked to the precision it is written with (``25.41``: within 0.005; an integer written
  ``1572`` against an integer exactly), so a machine whose last float digits differ passes and a
  changed number does not. The command is ``boundcalc ARGS`` (run in this process through
  :func:`boundcalc.cli.main`) or ``derived NAME ARGS``: a function of :data:`DERIVED` computing
  from the calculator what no single command prints (the width from which every free cap is
  inactive). ``numbers (slow):`` marks a command that needs torch or more than a second or two
  (``validate``); ``{tmp}`` in it is a fresh temporary folder.
* an **output** block is the text output of a command, between the marker and ``<!-- end output
  -->``, in a fenced code block; it is compared as the recorded CLI outputs are (text exactly,
  runs of spaces as one, numbers to :data:`RTOL`).
* a **recorded** marker (``<!-- recorded: COMMAND; DEVICE; DATE -->``) labels numbers that come
  from a long torch run (paper presets, GPU timings): they are measurements, not regenerated;
  the marker says which command, on which machine and when.

Usage (from the repository root)::

    python docs/refresh.py --write          # regenerate every numbers marker and output block
    python docs/refresh.py --check          # list every difference as FILE:LINE; exit 1 if any
    python docs/refresh.py --check --slow   # the slow markers too

``--write`` changes a number only where the check fails, keeping the style it is written in (its
decimals, e-notation, digit groups). ``tests/docs/test_docs_numbers.py`` runs the check in CI.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

__all__ = ["DERIVED", "DOCUMENTS", "RTOL", "Difference", "check", "refresh", "same_text"]

ROOT = Path(__file__).resolve().parent.parent
#: The documents whose markers are checked.
DOCUMENTS = ("README.md", "docs/architecture.md", "docs/check.md", "docs/derivations.md",
             "docs/generalization.md", "docs/indrnn.md", "docs/validation.md")
#: Relative tolerance of a number in an output block (as the recorded CLI outputs).
RTOL = 1e-9

_MARKER = re.compile(r"<!--\s*(numbers|output|recorded)\s*(\(slow\))?\s*:(.*?)-->", re.S)
_END_OUTPUT = "<!-- end output -->"
_FENCE = re.compile(r"\s*```[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
#: A number as the docs write it: digit groups of three separated by a space, decimals,
#: e-notation; or a word (a verdict).
_VALUE = (r"(?:[-−]?\d{1,3}(?:[ \u2009\u202f]\d{3})+(?!\d)(?:\.\d+)?"
          r"|[-−]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
          r"|[A-Za-z_]+)")
_NUMBER_IN_TEXT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Difference:
    """One place where a document no longer says what the command prints."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


# ---- running the commands -------------------------------------------------------------------

def _run_boundcalc(argv: list[str]) -> str:
    """Standard output of ``boundcalc ARGV`` run in this process (100 columns, as the recorded
    outputs); a nonzero exit other than 1 (``--strict``, a target not met) is an error."""
    from boundcalc.cli import main

    out, err = io.StringIO(), io.StringIO()
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous
    if code not in (0, 1):
        raise RuntimeError(f"boundcalc {shlex.join(argv)} exited {code}: {err.getvalue()}")
    return out.getvalue()


def caps_inactive_from(argv: list[str]) -> dict[str, Any]:
    """For a Theorem 1 setting given as ``boundcalc sweep`` flags (without ``--m``): per free cap
    (``eps_lin_cap`` …, docs/derivations.md §4.1) the smallest even m from which the constant
    stays strictly below its cap for every even m up to 8192 (``<cap>_binds_to``: that m − 2, the
    largest width at which the cap binds), the smallest such m for every cap (``every``), and each
    constant and its cap at m = 8.

    Example:
        >>> out = caps_inactive_from(["--n", "1000", "--d", "8", "--rho", "3", "--nu", "3"])
        >>> out["every"] >= out["eps_lin_cap"]
        True
    """
    import boundcalc

    keywords: dict[str, Any] = {}
    for flag, value in zip(argv[::2], argv[1::2], strict=True):
        keywords[flag.lstrip("-").replace("-", "_")] = value
    frame = boundcalc.sweep("theorem1", m="2:8192:2", **keywords)
    out: dict[str, Any] = {}
    every = 2
    for cap in [c for c in frame.columns if c.endswith("_cap")]:
        name = cap[: -len("_cap")]
        binding = frame["m"][frame[cap] <= frame[name]]
        first = int(binding.max()) + 2 if len(binding) else 2
        short = cap.split(".")[-1]
        out[short] = first
        out[f"{short}_binds_to"] = first - 2  # the largest m at which it binds (0: none)
        every = max(every, first)
        at8 = frame[frame["m"] == 8]
        out[f"{name.split('.')[-1]}_at_8"] = float(at8[name].iloc[0])
        out[f"{short}_at_8"] = float(at8[cap].iloc[0])
    out["every"] = every
    return out


def readme_check_example(argv: list[str]) -> str:
    """What README.md's "Check your own run" example prints: its Python block (the one that
    calls ``boundcalc.save_run``) run in a temporary folder (torch; about 6 s)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", readme, re.S | re.M)
    code = next(block for block in blocks if "boundcalc.save_run" in block)
    out = io.StringIO()
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="boundcalc-docs-check-") as folder:
        os.chdir(folder)
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, "README.md (check example)", "exec"), {})  # noqa: S102
        finally:
            os.chdir(here)
    return out.getvalue()


def validate_results(argv: list[str]) -> dict[str, Any]:
    """``boundcalc validate ARGV`` run into a temporary run directory (torch): the number of
    measurements and of violations, and each measurement's row of ``results.json`` by its name
    with ``:`` for ``.`` (``theorem1:min_iterate``; the first row of a name measured several
    ways)."""
    with tempfile.TemporaryDirectory(prefix="boundcalc-docs-validate-") as folder:
        _run_boundcalc(["validate", *argv, "--out", str(Path(folder) / "run")])
        rows = json.loads((Path(folder) / "run" / "results.json").read_text(encoding="utf-8"))
    out: dict[str, Any] = {"measurements": len(rows),
                           "violations": sum(1 for row in rows if row.get("holds") is False)}
    for row in rows:
        out.setdefault(str(row["name"]).replace(".", ":"), row)
    return out


def reproduce_cells(argv: list[str]) -> dict[str, Any]:
    """``boundcalc reproduce ARGV`` run into a temporary run directory (torch; for the quick
    presets): its cells (``cells``, one dict each, as :func:`boundcalc.load_run` reads them)."""
    import boundcalc

    with tempfile.TemporaryDirectory(prefix="boundcalc-docs-reproduce-") as folder:
        _run_boundcalc(["reproduce", *argv, "--out", str(Path(folder) / "run")])
        cells = boundcalc.load_run(Path(folder) / "run").cells
    return {"cells": json.loads(cells.to_json(orient="records"))}


#: ``derived NAME ARGS`` markers: NAME → function of the argument list returning a JSON-like
#: value.
DERIVED: dict[str, Callable[[list[str]], Any]] = {"caps_inactive_from": caps_inactive_from,
                                                  "readme_check_example": readme_check_example,
                                                  "reproduce_cells": reproduce_cells,
                                                  "validate_results": validate_results}


class _Outputs:
    """Each command's output, computed once per check."""

    def __init__(self, slow: bool) -> None:
        self.slow = slow
        self._cache: dict[str, Any] = {}
        self._tmp = tempfile.TemporaryDirectory(prefix="boundcalc-docs-")

    def close(self) -> None:
        self._tmp.cleanup()

    def get(self, command: str) -> Any:
        if command not in self._cache:
            self._cache[command] = self._compute(command)
        return self._cache[command]

    def _compute(self, command: str) -> Any:
        words = shlex.split(command.replace("{tmp}", self._new_folder()))
        if words[:1] == ["derived"]:
            if len(words) < 2 or words[1] not in DERIVED:
                raise ValueError(f"unknown derived source {words[1:2]}; known: {sorted(DERIVED)}")
            return DERIVED[words[1]](words[2:])
        if words[:1] != ["boundcalc"]:
            raise ValueError(f"a source is 'boundcalc ARGS' or 'derived NAME ARGS', got "
                             f"{command!r}")
        text = _run_boundcalc(words[1:])
        with contextlib.suppress(ValueError):
            if text.lstrip()[:1] in "[{":
                return json.loads(text)
        return text

    def _new_folder(self) -> str:
        return tempfile.mkdtemp(dir=self._tmp.name)


# ---- reading a value ------------------------------------------------------------------------

def _select(data: Any, path: str) -> Any:
    """The value at ``path`` (see the module docstring).

    Example:
        >>> _select({"rows": [{"x": 1}, {"x": 3}]}, "max(rows.*.x)"), _select([4, 5], "-1")
        (3, 5)
        >>> _select("a = 12.5 here", "/a = (\\\\S+)/")
        '12.5'
    """
    if path.startswith("/") and path.endswith("/") and len(path) > 1:
        if not isinstance(data, str):
            raise ValueError(f"{path} reads text, but the output is JSON")
        found = re.search(path[1:-1], data, re.M)
        if found is None:
            raise ValueError(f"{path} does not match the output")
        return found.group(1)
    reduce = re.fullmatch(r"(min|max|count)\((.*)\)", path)
    if reduce:
        values = _select(data, reduce.group(2))
        values = values if isinstance(values, list) else [values]
        if reduce.group(1) == "count":
            return len(values)
        pick = min if reduce.group(1) == "min" else max
        return pick(values, key=lambda v: Decimal(str(v)))
    current: Any = data
    parts = path.split(".") if path else []
    for i, part in enumerate(parts):
        if part == "*":
            rest = ".".join(parts[i + 1:])
            return [_select(item, rest) for item in current]
        if isinstance(current, list):
            current = current[int(part)]
        elif isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, dict) and ".".join(parts[i:]) in current:
            return current[".".join(parts[i:])]  # flat keys of a sweep row ("bound.min_iterate")
        else:
            raise ValueError(f"no {part!r} in the output (path {path})")
    return current


def _decimal(value: Any) -> Decimal | None:
    """``value`` as a Decimal (numbers and number-like text such as ``"3.890718e+387"``)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = Decimal(re.sub("[ \u2009\u202f]", "", str(value).replace("−", "-")))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _matches(written: str, value: Any) -> bool:
    """Whether ``written`` (the doc's text) says ``value`` to the precision it is written with.

    Example:
        >>> _matches("25.41", 25.41278), _matches("25.41", 25.4178), _matches("1 714 014", 1714014)
        (True, False, True)
        >>> _matches("3.890718e+387", "3.890718e+387"), _matches("vacuous", "vacuous")
        (True, True)
        >>> _matches("1572", 1572), _matches("1572", 1574), _matches("81", 81.0)
        (True, False, True)
    """
    doc, got = _decimal(written), _decimal(value)
    if doc is None or got is None:
        return written == str(value)
    if isinstance(value, int) and "." not in written and "e" not in written:
        return doc == got
    ulp = Decimal(1).scaleb(doc.as_tuple().exponent)  # type: ignore[arg-type]
    return abs(doc - got) <= ulp / 2 * Decimal("1.000000001")


def _written_like(written: str, value: Any) -> str:
    """``value`` in the style of ``written``: its decimals or significant digits, e-notation and
    digit groups.

    Example:
        >>> _written_like("67.57", 25.41278), _written_like("1.04e3", 533.2)
        ('25.41', '5.33e2')
        >>> _written_like("188", 112), _written_like("0.44", 0.21357)
        ('112', '0.21')
        >>> _written_like("3.835824e+621", "3.890718e+387"), _written_like("1 714 014", 1713990.0)
        ('3.890718e+387', '1 713 990')
    """
    got = _decimal(value)
    if got is None:
        return str(value)
    sign = "−" if written.startswith("−") and got < 0 else ""
    if sign:
        got = -got
    mantissa, e, exponent = written.partition("e")
    if e:
        digits = len(mantissa.replace("-", "").replace("−", "").replace(".", "").lstrip("0"))
        text = format(got, f".{max(digits - 1, 0)}e")
        head, _, power = text.partition("e")
        power_sign = "-" if power.startswith("-") else ("+" if exponent[:1] == "+" else "")
        return f"{sign}{head}e{power_sign}{int(power.lstrip('+-')):d}"
    decimals = len(written.partition(".")[2])
    text = format(got.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_EVEN), "f")
    group = next((c for c in " \u2009\u202f" if c in written), None)
    if group is not None:
        whole, dot, fraction = text.partition(".")
        whole = format(int(whole), ",").replace(",", group)
        text = whole + dot + fraction
    return sign + text


# ---- the markers ----------------------------------------------------------------------------

@dataclass
class _Marker:
    kind: str
    slow: bool
    source: str
    entries: list[tuple[str, str]]
    start: int
    end: int


def _markers(text: str) -> Iterator[_Marker]:
    for found in _MARKER.finditer(text):
        kind, slow, body = found.group(1), bool(found.group(2)), found.group(3)
        lines = [line.strip() for line in body.strip().splitlines() if line.strip()]
        source = lines[0] if lines else ""
        entries = []
        for line in lines[1:]:
            key, sep, context = line.partition(": ")
            entries.append((key.strip(), context if sep else ""))
        yield _Marker(kind, slow, source, entries, found.start(), found.end())


def _paragraph(text: str, start: int) -> tuple[int, int]:
    """The span of the paragraph after a marker ending at ``start``: past blank space and other
    markers, up to the next blank line (a fenced code block: up to its closing fence)."""
    position = start
    while True:
        stripped = re.match(r"\s*", text[position:])
        position += stripped.end() if stripped else 0
        following = _MARKER.match(text, position)
        if following is None:
            break
        position = following.end()
    if text.startswith("```", position):  # a fenced block: up to its closing fence
        fence = re.compile(r"^[ \t]*```[ \t]*$", re.M).search(text, text.find("\n", position))
        return position, fence.end() if fence else len(text)
    blank = re.search(r"\n[ \t]*\n", text[position:])
    return position, position + blank.start() if blank else len(text)


_CELL = re.compile(r"row (.+?) column (\d+)")


def _table_cell(region: str, context: str) -> list[tuple[int, int]] | None:
    """For a context ``row LABEL column K``: the span of the first value in column K (1 is the
    label's) of the table row whose first cell is LABEL, as a one-item list (empty: no such
    row or cell); None for any other context.

    Example:
        >>> table = "| m | a | b |\\n|---|---|---|\\n| 256 | 6302.3 | vacuous (x) |"
        >>> [table[a:b] for a, b in _table_cell(table, "row 256 column 3")]
        ['vacuous']
    """
    address = _CELL.fullmatch(context.strip())
    if address is None:
        return None
    label, column = address.group(1), int(address.group(2))
    offset = 0
    for line in region.splitlines(keepends=True):
        cells = line.split("|")
        if len(cells) > column + 1 and cells[1].strip() == label:
            start = offset + sum(len(c) + 1 for c in cells[:column])
            found = re.search(_VALUE, cells[column])
            return [] if found is None else [(start + found.start(), start + found.end())]
        offset += len(line)
    return []


_COLUMN = re.compile(r"column (\d+)")


def _table_column(region: str, column: int, values: Any) -> list[tuple[int, int]]:
    """The spans of the first value in column ``column`` of each data row of the table in
    ``region``, one per item of ``values`` (a list, as many as the rows).

    Example:
        >>> table = "| m | a |\\n|---|---|\\n| 8 | 1.5 |\\n| 16 | 2.5 (x) |\\n"
        >>> [table[a:b] for a, b in _table_column(table, 2, [1.5, 2.5])]
        ['1.5', '2.5']
    """
    if not isinstance(values, list):
        raise ValueError("'column K' needs a list of values (a path with *)")
    spans, offset, body = [], 0, False
    for line in region.splitlines(keepends=True):
        cells = line.split("|")
        if body and line.startswith("|") and len(cells) > column + 1:
            found = re.search(_VALUE, cells[column])
            if found is not None:
                start = offset + sum(len(c) + 1 for c in cells[:column])
                spans.append((start + found.start(), start + found.end()))
        body = body or (line.startswith("|") and set(line.strip()) <= set("|-: "))
        offset += len(line)
    if len(spans) != len(values):
        raise ValueError(f"the table has {len(spans)} rows with a value in column {column}, "
                         f"the command {len(values)} values")
    return spans


def _context_pattern(context: str) -> re.Pattern[str]:
    """The text around a number as a pattern: whitespace loose, ``{}`` the number (group 1),
    ``{_}`` any other number.

    Example:
        >>> _context_pattern("({_}–{} on the").search("bound (533–2074\\n  on the").group(1)
        '2074'
    """
    before, placeholder, after = context.partition("{}")
    if not placeholder:
        raise ValueError(f"the text {context!r} has no {{}} for the number")

    def loose(part: str) -> str:
        words = (re.escape(word).replace(re.escape("{_}"), f"(?:{_VALUE})")
                 for word in part.split())
        return r"\s+".join(words)

    lead = loose(before) + (r"\s+" if before[-1:].isspace() else "")
    tail = (r"\s+" if after[:1].isspace() else "") + loose(after)
    return re.compile(f"{lead}({_VALUE}){tail}")


def _line(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def same_text(got: str, want: str) -> bool:
    """Whether two outputs agree: the same text around the numbers (runs of spaces and of the
    table rule ``─`` as one), integers equal, other numbers within :data:`RTOL`.

    Example:
        >>> same_text("B² =  183.917 (m = 512)", "B² = 183.91700000001 (m = 512)")
        True
        >>> same_text("m = 512", "m = 514"), same_text("B² = 183.917", "B² = 183.918")
        (False, False)
    """
    def skeleton(text: str) -> tuple[str, list[str]]:
        numbers = _NUMBER_IN_TEXT.findall(text)
        body = _NUMBER_IN_TEXT.sub("#", text)
        return re.sub(r" +|─+", lambda run: run.group()[0], body).strip(), numbers

    (got_text, got_numbers), (want_text, want_numbers) = skeleton(got), skeleton(want)
    if got_text != want_text or len(got_numbers) != len(want_numbers):
        return False
    for a, b in zip(got_numbers, want_numbers, strict=True):
        if a == b:
            continue
        if not any(c in a + b for c in ".eE"):
            return False
        if not math.isclose(float(a), float(b), rel_tol=RTOL, abs_tol=1e-12):
            return False
    return True


def _process(path: str, text: str, outputs: _Outputs, write: bool
             ) -> tuple[str, list[Difference], int]:
    """``text`` with its markers regenerated (when ``write``), the differences found, and the
    number of values checked."""
    differences: list[Difference] = []
    edits: list[tuple[int, int, str]] = []
    checked = 0
    for marker in _markers(text):
        line = _line(text, marker.start)
        if marker.kind == "recorded":
            if marker.source.count(";") < 2:
                differences.append(Difference(path, line, "a recorded marker says "
                                              "'COMMAND; DEVICE; DATE'"))
            continue
        if marker.slow and not outputs.slow:
            continue
        try:
            data = outputs.get(marker.source)
        except Exception as err:  # a broken source is a difference, not a crash
            differences.append(Difference(path, line, f"{marker.source}: {err}"))
            continue
        if marker.kind == "output":
            checked += 1
            found = _output_block(text, marker)
            if found is None:
                differences.append(Difference(path, line, "an output marker needs a fenced "
                                              f"block and then {_END_OUTPUT}"))
                continue
            start, end, body = found
            want = data if isinstance(data, str) else json.dumps(data, indent=1) + "\n"
            if not same_text(want, body):
                differences.append(Difference(path, _line(text, start), f"the output of "
                                              f"{marker.source} has changed"))
                edits.append((start, end, want))
            continue
        first, last = _paragraph(text, marker.end)
        region = text[first:last]
        for key, context in marker.entries:
            try:
                value = _select(data, key)
                column = _COLUMN.fullmatch(context.strip())
                if column is not None:  # a list of values down one column of a table
                    items = list(zip(_table_column(region, int(column.group(1)), value),
                                     value, strict=True))
                else:
                    spans = _table_cell(region, context)
                    if spans is None:
                        spans = [hit.span(1) for hit in _context_pattern(context).finditer(region)]
                    if len(spans) != 1:
                        where = "not found" if not spans else f"found {len(spans)} times"
                        raise ValueError(f"{context!r} {where} in the paragraph after the marker")
                    items = [(spans[0], value)]
            except (ValueError, IndexError, KeyError, TypeError) as err:
                checked += 1
                differences.append(Difference(path, line, f"{key}: {err}"))
                continue
            for (start, end), one in items:
                checked += 1
                written = region[start:end]
                if not _matches(written, one):
                    new = _written_like(written, one)
                    differences.append(Difference(path, _line(text, first + start), f"{written} "
                                                  f"should be {new} ({key} of {marker.source})"))
                    edits.append((first + start, first + end, new))
    if write:
        for start, end, new in sorted(edits, reverse=True):
            text = text[:start] + new + text[end:]
    return text, differences, checked


def _output_block(text: str, marker: _Marker) -> tuple[int, int, str] | None:
    """The span and text of the fenced block's body after an output marker."""
    end = text.find(_END_OUTPUT, marker.end)
    if end < 0:
        return None
    fence = _FENCE.match(text, marker.end, end)
    if fence is None:
        return None
    return fence.start(1), fence.end(1), fence.group(1)


def refresh(root: Path = ROOT, *, write: bool, slow: bool = False,
            documents: tuple[str, ...] = DOCUMENTS) -> tuple[list[Difference], int]:
    """Check (and with ``write`` regenerate) every marker of ``documents``; the differences
    found before writing, and the number of values and blocks checked."""
    outputs = _Outputs(slow)
    differences: list[Difference] = []
    checked = 0
    try:
        for name in documents:
            file = root / name
            text = file.read_text(encoding="utf-8")
            new, found, count = _process(name, text, outputs, write)
            differences += found
            checked += count
            if write and new != text:
                file.write_text(new, encoding="utf-8")
    finally:
        outputs.close()
    return differences, checked


def check(root: Path = ROOT, *, slow: bool = False,
          documents: tuple[str, ...] = DOCUMENTS) -> list[Difference]:
    """Every difference between the documents and the commands they quote."""
    return refresh(root, write=False, slow=slow, documents=documents)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate every marker")
    mode.add_argument("--check", action="store_true", help="list the differences; exit 1 if any")
    parser.add_argument("--slow", action="store_true", help="also the slow markers (torch)")
    args = parser.parse_args(argv)
    differences, checked = refresh(write=args.write, slow=args.slow)
    for difference in differences:
        print(difference)
    if args.write:
        print(f"{checked} values and blocks checked, {len(differences)} rewritten"
              if differences or checked else "no markers")
        return 0
    print(f"{checked} values and blocks checked, {len(differences)} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
