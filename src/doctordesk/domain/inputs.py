"""The two rules every value read from a request follows: numbers and free text (docs/protocol.md#input-rules).

Numbers (ids in paths, forms and queries, versions, limits, card numbers) are written in ASCII digits only: no
sign, no spaces, no leading zeros, no other scripts' digits (``²``, ``١``), within a documented range. Python's
``str.isdigit`` and ``int`` accept all of those, so nothing reads a number from a request except ``parse_int``.

Free text (names, passwords, reasons, messages, file names, header values) holds no control characters: NUL
cannot be stored by PostgreSQL and the others have no place in typed text (they confuse logs and terminals). Only
fields documented as multi-line (a message, a decline reason) keep tab, newline and carriage return. Lone
surrogates, which no database stores as UTF-8, are refused the same way.
"""

from __future__ import annotations

import re

from doctordesk.domain.texts import N_, Text

# Ids are positive and within what every database and JavaScript's numbers hold exactly.
MAX_ID = 2**53

_DIGITS = re.compile(r"(?:0|[1-9][0-9]*)", re.ASCII)
# The longest spelling parse_int reads: MAX_ID has 16 digits; longer inputs are refused before int() sees them.
_MAX_DIGITS = 19

# Free text refuses control characters (C0, DEL, C1) and lone surrogates; multi-line text allows tab, LF and CR.
_SINGLE_LINE_REFUSED = r"\x00-\x1f\x7f-\x9f"
_MULTI_LINE_REFUSED = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_CONTROL_SINGLE_LINE = re.compile(rf"[{_SINGLE_LINE_REFUSED}\ud800-\udfff]")
_CONTROL_MULTI_LINE = re.compile(rf"[{_MULTI_LINE_REFUSED}\ud800-\udfff]")
# The same rule as JSON Schema patterns, for the API description (a lone surrogate cannot travel as UTF-8 at all).
TEXT_PATTERN = rf"^[^{_SINGLE_LINE_REFUSED}]*$"
MULTI_LINE_TEXT_PATTERN = rf"^[^{_MULTI_LINE_REFUSED}]*$"
# Text with something besides white space in it (a field the service strips before it counts the characters).
NON_BLANK_TEXT_PATTERN = rf"^[^{_SINGLE_LINE_REFUSED}]*[^\s{_SINGLE_LINE_REFUSED}][^{_SINGLE_LINE_REFUSED}]*$"
# Multi-line text with something besides white space in it.
NON_BLANK_MULTI_LINE_TEXT_PATTERN = rf"^[^{_MULTI_LINE_REFUSED}]*[^\s{_MULTI_LINE_REFUSED}][^{_MULTI_LINE_REFUSED}]*$"


def parse_int(raw: str | None, *, minimum: int = 1, maximum: int = MAX_ID) -> int | None:
    """The number ``raw`` spells in ASCII digits, when it lies in ``minimum..maximum``; None otherwise (empty,
    a sign, spaces, leading zeros, other digits, out of range)."""
    if raw is None or len(raw) > _MAX_DIGITS or not _DIGITS.fullmatch(raw):
        return None
    value = int(raw)
    return value if minimum <= value <= maximum else None


def parse_id(raw: str | None) -> int | None:
    """An id: ``parse_int`` from 1 to ``MAX_ID``."""
    return parse_int(raw, minimum=1, maximum=MAX_ID)


def text_problem(value: str, *, max_chars: int | None, multiline: bool = False) -> str | None:
    """Why ``value`` is not acceptable free text (a message for the field), or None when it is. ``max_chars``
    None: no limit here (the field is cut or bounded elsewhere)."""
    if max_chars is not None and len(value) > max_chars:
        return Text("At most {count} characters.", count=max_chars)
    pattern = _CONTROL_MULTI_LINE if multiline else _CONTROL_SINGLE_LINE
    if pattern.search(value):
        return N_("Contains control characters.") if multiline else N_("Contains control characters or line breaks.")
    return None


def control_character(value: str, *, multiline: bool = False) -> str | None:
    """The first character of ``value`` free text may not hold, or None."""
    found = (_CONTROL_MULTI_LINE if multiline else _CONTROL_SINGLE_LINE).search(value)
    return found.group() if found else None


def check_text(
    fields: dict[str, str], name: str, value: str, *, max_chars: int | None, multiline: bool = False
) -> None:
    """Record in ``fields`` why ``value`` (the field ``name``) is not acceptable free text, if it is not."""
    problem = text_problem(value, max_chars=max_chars, multiline=multiline)
    if problem is not None:
        fields.setdefault(name, problem)


def is_plain_text(value: str, *, max_chars: int | None, multiline: bool = False) -> bool:
    return text_problem(value, max_chars=max_chars, multiline=multiline) is None
