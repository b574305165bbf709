"""The one rule for a name, a text read as the label of someone or something (display names, locations, insurers,
services, patients' names), wherever it is written: no character that is invisible or changes how the text around
it shows, and at least one character that shows (docs/administration.md#names). Free text follows domain/inputs.py
instead."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator

from doctordesk.domain.texts import Text

REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# Where Unicode puts its controls, format characters, separators and surrogates: the BMP, plane 1 (Egyptian
# hieroglyph and musical format controls, shorthand format controls) and plane 14 (tags). A test checks that no
# other code point is refused.
_PLANES = (range(0x0000, 0x20000), range(0xE0000, 0xE1000))
# Format characters a script needs: zero-width non-joiner and joiner.
JOINERS = frozenset("\u200c\u200d")
# Letters that show as nothing.
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
# What shows nothing by itself, by Unicode's general categories: separators (spaces), marks (they need a letter to
# sit on; variation selectors are marks), controls, format characters (the joiners among them) and surrogates.
# Private-use and unassigned code points do show (a box, or what a newer font draws).
UNSEEN_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Mn", "Mc", "Me", "Cc", "Cf", "Cs"})
# Unicode has no property for "drawn as nothing": beside the Hangul fillers (letters), the Braille blank is the one
# symbol drawn empty. It is no control (Braille text spaces its words with it), so it is allowed, but does not count.
BLANK_SYMBOLS = frozenset("\u2800")
# The bidirectional controls, all refused in names (named for the docs and tests; they are format characters).
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def is_refused(char: str) -> bool:
    """Whether ``char`` may not appear in a name."""
    if char in JOINERS:
        return False
    return char in BLANK_LETTERS or unicodedata.category(char) in REFUSED_CATEGORIES


def is_seen(char: str) -> bool:
    """Whether ``char`` shows something by itself: a name needs one such character."""
    return not (char in BLANK_LETTERS or char in BLANK_SYMBOLS or unicodedata.category(char) in UNSEEN_CATEGORIES)


def refused_character(value: str) -> str | None:
    """The first character of ``value`` a name may not hold, or None."""
    return next((char for char in value if is_refused(char)), None)


def code_point(char: str) -> str:
    """``U+202E``: how a refused character is named in a message."""
    return f"U+{ord(char):04X}"


def name_problem(value: str, *, max_chars: int) -> str | None:
    """Why ``value`` is not an acceptable name of at most ``max_chars`` characters (counted without the white
    space around it), or None: the message for the field, in the screens' and API's style. A name with nothing
    that shows (only spaces of any kind, joiners, the Braille blank) gets one message, whichever it uses."""
    if not value or len(value.strip()) > max_chars:
        return Text("{low} to {high} characters.", low=1, high=max_chars)
    char = refused_character(value)
    if char is not None:
        return Text("Contains an invisible or control character ({code}).", code=code_point(char))
    if not any(map(is_seen, value)):
        return Text("Shows no visible character: give a letter, digit or sign.")
    return None


def check_name(fields: dict[str, str], name: str, value: str | None, *, max_chars: int) -> None:
    """Record in ``fields`` why ``value`` (the field ``name``; None: not given) is not an acceptable name."""
    if value is None:
        return
    problem = name_problem(value, max_chars=max_chars)
    if problem is not None:
        fields.setdefault(name, problem)


def _ranges(points: Iterable[int]) -> Iterator[tuple[int, int]]:
    start = end = -2
    for point in points:
        if point != end + 1:
            if start >= 0:
                yield start, end
            start = point
        end = point
    if start >= 0:
        yield start, end


def _escaped(point: int) -> str:
    # BMP code points as \uXXXX (JSON Schema's ECMA patterns and Python's re both read it); the few beyond the BMP
    # as themselves (a pattern read with ECMA's u flag, or by Python, sees one character).
    return f"\\u{point:04x}" if point <= 0xFFFF else re.escape(chr(point))


def _refused_class() -> str:
    # Lone surrogates are left out of the stated class (still refused by is_refused): no UTF-8 text can carry one,
    # and JSON Schema's regex engines (jsonschema-rs, ECMA's u mode) refuse a pattern that names them.
    points = (p for plane in _PLANES for p in plane if is_refused(chr(p)) and not 0xD800 <= p <= 0xDFFF)
    return "".join(_escaped(a) if a == b else f"{_escaped(a)}-{_escaped(b)}" for a, b in _ranges(points))


def _unseen_class() -> str:
    # Every unseen character that is not refused (is_seen's categories and blanks live in the same planes).
    points = (p for plane in _PLANES for p in plane if not is_seen(chr(p)) and not is_refused(chr(p)))
    return "".join(_escaped(a) if a == b else f"{_escaped(a)}-{_escaped(b)}" for a, b in _ranges(points))


REFUSED_CLASS = _refused_class()
UNSEEN_CLASS = _unseen_class()
# The rule as a JSON Schema pattern: no refused character, and one that shows.
NAME_PATTERN = rf"^[^{REFUSED_CLASS}]*[^{REFUSED_CLASS}{UNSEEN_CLASS}][^{REFUSED_CLASS}]*$"
# A name that may be left empty (an address, a key's label, an optional field of a form).
OPTIONAL_NAME_PATTERN = rf"^[^{REFUSED_CLASS}]*$"


def shown(value: str) -> str:
    """``value`` safe to print in a terminal or a log: every character a name may not hold written as an escape
    (``\\u202e``), the rest as it is."""
    return "".join(char.encode("unicode_escape").decode("ascii") if is_refused(char) else char for char in value)
