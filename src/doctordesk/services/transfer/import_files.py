"""Reading import files (CSV or JSON) into raw rows, each with the line it starts on.

CSV: one kind per file, a header row of field names, UTF-8 (a byte order mark is allowed); list fields hold their
items separated by ``;``; a cell the export marked as text for spreadsheets (domain/transfer/csv_cells.py) is read back
as it was. JSON: an object with one list of row objects per kind (``{"locations": [...], ...}``), or a
bare list of row objects of one kind. The kind of a CSV file or a bare JSON list comes from ``--kind`` or else from
the file name (``appointments.csv``, ``doctors-2026.json``).

Whatever the file holds, reading it ends in rows or in one ``ImportFileError`` naming the line: JSON nested deeper
than ``MAX_JSON_DEPTH`` is refused before it is parsed (Python's parser would run out of stack), numbers too long
to be a number of any field are a bad value rather than a conversion error, and a CSV cell longer than
``MAX_CSV_CELL`` is a malformed file.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from doctordesk.domain.texts import N_, Text
from doctordesk.domain.transfer.csv_cells import restore
from doctordesk.domain.transfer.import_rows import Kind, Problem, RawValue
from doctordesk.i18n import t


class ImportFileError(Exception):
    """The file as a whole cannot be read (not a row's fault): unreadable, malformed, or of no known shape. The
    reason is an ``N_`` text or a ``Text``: ``in_language`` gives the line in the reader's language."""

    def __init__(self, source: str, line: int, reason: str) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        super().__init__(f"{source}:{line}: {reason}")

    def in_language(self, locale: str) -> str:
        return f"{self.source}:{self.line}: {t(locale, self.reason)}"


@dataclass(slots=True)
class RawRow:
    kind: Kind
    line: int
    fields: dict[str, RawValue | None]
    # Problems found while reading (a JSON value of the wrong type, a CSV row of the wrong width).
    problems: list[Problem] = field(default_factory=list)


FORMATS = ("csv", "json")
# The shape an import reads is 4 deep (document, list of rows, row, list field); anything far deeper is no import.
MAX_JSON_DEPTH = 16
# A JSON number's digits: no field holds a number nearly this long (Python refuses to convert beyond 4,300).
MAX_NUMBER_DIGITS = 20
# The longest CSV cell read (the longest field, the insurer's raw record, is 10,000 characters).
MAX_CSV_CELL = 131_072


def kind_from_name(path: Path) -> Kind | None:
    """The kind a file's name starts with (``appointments.csv``, ``hours-berlin.csv``), if any."""
    stem = path.name.split(".")[0].lower()
    for kind in Kind:
        if re.fullmatch(rf"{kind.value}([^a-z].*)?", stem):
            return kind
    return None


def read_rows(path: Path, *, kind: Kind | None = None, file_format: str | None = None) -> list[RawRow]:
    """Every row of the file, in file order."""
    source = str(path)
    fmt = file_format or path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ImportFileError(source, 0, N_("unknown format: name the file .csv or .json, or give --format"))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFileError(source, 0, Text("cannot be read ({error})", error=exc.strerror)) from None
    try:
        # Bytes decoded as they are: line ends inside quoted CSV cells stay what they were.
        content = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ImportFileError(source, line, Text("not UTF-8 text (byte {byte})", byte=exc.start)) from None
    kind = kind or kind_from_name(path)
    if fmt == "csv":
        if kind is None:
            raise ImportFileError(source, 0, N_("which kind of rows? give --kind or name the file after the kind"))
        return list(_csv_rows(source, content, kind))
    return _json_rows(source, content, kind)


def _csv_rows(source: str, content: str, kind: Kind) -> Iterator[RawRow]:
    csv.field_size_limit(MAX_CSV_CELL)  # the process-wide limit, said here rather than relied on
    reader = csv.reader(io.StringIO(content, newline=""), strict=True)
    try:
        first = next(reader, None)
        if not first:
            raise ImportFileError(source, 1, N_("no header row"))
        header = [restore(cell) for cell in first]
        if len(set(header)) != len(header):
            raise ImportFileError(source, 1, N_("a column name appears twice in the header"))
        before = reader.line_num
        for cells in reader:
            line, before = before + 1, reader.line_num
            if not cells:
                continue
            if len(cells) != len(header):
                problem = Problem(
                    "", Text("has {cells} cells, the header has {columns}", cells=len(cells), columns=len(header))
                )
                yield RawRow(kind, line, {}, [problem])
                continue
            yield RawRow(kind, line, dict(zip(header, (restore(cell) for cell in cells), strict=True)))
    except csv.Error as exc:
        raise ImportFileError(source, reader.line_num, Text("malformed CSV ({error})", error=str(exc))) from None


_WS = re.compile(r"[ \t\n\r]*")


class _Scanner:
    """Walks a JSON document's outer structure, decoding each row object on its own, to know the line of each."""

    def __init__(self, source: str, content: str) -> None:
        self.source = source
        self.text = content
        self.pos = 0
        self._line = 1
        self._line_pos = 0
        self.decoder = json.JSONDecoder(object_pairs_hook=_Object.of, parse_int=_integer, parse_constant=_constant)

    def line(self) -> int:
        self._line += self.text.count("\n", self._line_pos, self.pos)
        self._line_pos = self.pos
        return self._line

    def fail(self, reason: str) -> ImportFileError:
        return ImportFileError(self.source, self.line(), reason)

    def skip(self) -> str:
        match = _WS.match(self.text, self.pos)
        self.pos = match.end() if match else self.pos
        return self.text[self.pos : self.pos + 1]

    def expect(self, char: str) -> None:
        if self.skip() != char:
            raise self.fail(Text("expected {char}", char=repr(char)))
        self.pos += 1

    def value(self) -> Any:
        self.skip()
        try:
            value, self.pos = self.decoder.raw_decode(self.text, self.pos)
        except json.JSONDecodeError as exc:
            raise ImportFileError(self.source, exc.lineno, Text("malformed JSON ({error})", error=exc.msg)) from None
        return value

    def rows(self, kind: Kind) -> Iterator[RawRow]:
        self.expect("[")
        if self.skip() == "]":
            self.pos += 1
            return
        while True:
            self.skip()
            line = self.line()
            yield _json_row(kind, line, self.value())
            nxt = self.skip()
            self.pos += 1
            if nxt == "]":
                return
            if nxt != ",":
                self.pos -= 1
                raise self.fail(N_("expected ',' or ']'"))


# A JSON string (escapes included) or a bracket: what the depth check walks over.
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def _check_depth(source: str, content: str) -> None:
    """Refuse a document nested deeper than ``MAX_JSON_DEPTH`` before the parser (which recurses) sees it."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(content):
        char = match.group()
        if char in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                line = content.count("\n", 0, match.start()) + 1
                raise ImportFileError(source, line, Text("nested more than {depth} deep", depth=MAX_JSON_DEPTH))
        elif char in "]}":
            depth -= 1


def _json_rows(source: str, content: str, kind: Kind | None) -> list[RawRow]:
    _check_depth(source, content)
    scanner = _Scanner(source, content)
    first = scanner.skip()
    rows: list[RawRow] = []
    if first == "[":
        if kind is None:
            raise scanner.fail(N_("a bare list of rows: give --kind or name the file after the kind"))
        rows.extend(scanner.rows(kind))
    elif first == "{":
        scanner.pos += 1
        seen: set[str] = set()
        if scanner.skip() == "}":
            scanner.pos += 1
        else:
            while True:
                key = scanner.value()
                if not isinstance(key, str) or key not in set(Kind):
                    raise scanner.fail(
                        Text("{key} is not a kind (one of {kinds})", key=repr(key), kinds=", ".join(Kind))
                    )
                if key in seen:
                    raise scanner.fail(Text("the kind {key} appears twice", key=repr(key)))
                seen.add(key)
                scanner.expect(":")
                rows.extend(scanner.rows(Kind(key)))
                nxt = scanner.skip()
                scanner.pos += 1
                if nxt == "}":
                    break
                if nxt != ",":
                    scanner.pos -= 1
                    raise scanner.fail(N_("expected ',' or '}'"))
    else:
        raise scanner.fail(N_("expected a JSON object with a list per kind, or a list of rows"))
    if scanner.skip():
        raise scanner.fail(N_("text after the end of the document"))
    return rows


class _Object(dict[str, Any]):
    """A JSON object; the keys given twice are remembered (the row is bad) rather than silently keeping the last."""

    twice: list[str]

    @classmethod
    def of(cls, pairs: list[tuple[str, Any]]) -> _Object:
        result = cls(pairs)
        result.twice = []
        if len(result) != len(pairs):
            seen: set[str] = set()
            for key, _value in pairs:
                if key in seen and key not in result.twice:
                    result.twice.append(key)
                seen.add(key)
        return result


@dataclass(frozen=True, slots=True)
class _Number:
    """A JSON number no field can hold (too many digits, or NaN/Infinity): kept as what it was, to be refused."""

    text: str


def _integer(text: str) -> int | _Number:
    return int(text) if len(text) <= MAX_NUMBER_DIGITS else _Number(text[:MAX_NUMBER_DIGITS] + "…")


def _constant(text: str) -> _Number:
    return _Number(text)


def _json_row(kind: Kind, line: int, value: Any) -> RawRow:
    if not isinstance(value, _Object):
        return RawRow(kind, line, {}, [Problem("", N_("a row must be a JSON object"))])
    fields: dict[str, RawValue | None] = {}
    problems = [Problem(name, N_("given twice")) for name in value.twice]
    for name, item in value.items():
        if item is None or isinstance(item, str):
            fields[name] = item
        elif isinstance(item, bool):
            fields[name] = "true" if item else "false"
        elif isinstance(item, int):
            fields[name] = str(item)
        elif isinstance(item, list) and all(isinstance(v, str) for v in item):
            fields[name] = list(item)
        elif isinstance(item, _Number):
            problems.append(Problem(name, Text("the number {number} is not allowed here", number=item.text)))
            fields[name] = None
        else:
            json_type = _JSON_TYPES.get(type(item), "value")
            problems.append(Problem(name, Text("a JSON {type} is not allowed here", type=json_type)))
            fields[name] = None
    return RawRow(kind, line, fields, problems)


_JSON_TYPES = {_Object: "object", list: "list", float: "number"}
