"""Every CSV the service writes goes through ``CsvWriter``: cells a spreadsheet would run as a formula are written
as text, and ``restore`` reads back exactly what was written (docs/import.md#csv-cells)."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Protocol

# What a spreadsheet may evaluate when a cell starts with it.
FORMULA_STARTS = "=+-@\t\r\n\uff1d\uff0b\uff0d\uff20"
TEXT_MARK = "'"
_NEEDS_MARK = re.compile(rf"'*[{re.escape(FORMULA_STARTS)}]")
_MARKED = re.compile(rf"'+[{re.escape(FORMULA_STARTS)}]")

Cell = str | int | Decimal | None


class _Writable(Protocol):
    def write(self, text: str, /) -> object: ...


def neutralise(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet evaluates (``restore`` gives ``text`` back)."""
    return TEXT_MARK + text if _NEEDS_MARK.match(text) else text


def restore(cell: str) -> str:
    """The text ``neutralise`` was given for ``cell`` (a cell it did not mark comes back unchanged)."""
    return cell[1:] if _MARKED.match(cell) else cell


def _cell(value: Cell) -> str | int | Decimal:
    if value is None:
        return ""
    if isinstance(value, bool):  # a bool is an int to Python, but no number to a reader
        raise TypeError("write a boolean as text")
    if isinstance(value, int | Decimal):
        return value
    return neutralise(value)


class CsvWriter:
    """``csv.writer`` with every text cell neutralised, CR LF line ends; ``None`` is an empty cell."""

    def __init__(self, out: _Writable) -> None:
        self._writer = csv.writer(out, lineterminator="\r\n")

    def row(self, cells: Iterable[Cell]) -> None:
        self._writer.writerow([_cell(c) for c in cells])
