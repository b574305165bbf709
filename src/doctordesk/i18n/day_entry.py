"""A day as the clinic writes it in a form (docs/web-app.md#dates-in-forms): all digits, day first, in the
reader's clinic format — ``23/11/2026`` (``en_GB``) and ``23.11.2026`` (``de_DE``) — taken from Babel's short date
pattern with a two-digit day and month and a four-digit year, so that it never reads as month first.

The screens send a ``Date`` element's value as the API's day (``YYYY-MM-DD``) with this pattern and its hint in
``props``; the web app shows and takes the day in the pattern and sends the API's day back."""

from __future__ import annotations

import functools
import re
from datetime import date
from typing import Any

from babel.dates import get_date_format

from doctordesk.i18n import N_, _, current
from doctordesk.i18n.formats import clinic_locale

# The placeholder's letters in the reader's language: DD/MM/YYYY, TT.MM.JJJJ.
_LETTERS = {"dd": N_("DD"), "MM": N_("MM"), "yyyy": N_("YYYY")}
_FIELDS = re.compile(r"dd|MM|yyyy")


def entry_pattern(locale: str | None = None) -> str:
    """The clinic's numeric day pattern in CLDR letters: ``dd/MM/yyyy`` or ``dd.MM.yyyy``."""
    return _pattern(clinic_locale(locale or current()))


@functools.cache
def _pattern(locale: str) -> str:
    short = get_date_format("short", locale=locale).pattern
    return re.sub(r"y+", "yyyy", re.sub(r"M+", "MM", re.sub(r"d+", "dd", short)))


def entry_hint(locale: str | None = None) -> str:
    """The pattern as a reader writes it: ``DD/MM/YYYY`` or ``TT.MM.JJJJ`` (the current request's language)."""
    return _FIELDS.sub(lambda m: _(_LETTERS[m.group(0)]), entry_pattern(locale))


def format_entry(day: date, locale: str | None = None) -> str:
    """``day`` in the entry pattern: ``23/11/2026`` or ``23.11.2026``."""
    values = {"dd": f"{day.day:02d}", "MM": f"{day.month:02d}", "yyyy": f"{day.year:04d}"}
    return _FIELDS.sub(lambda m: values[m.group(0)], entry_pattern(locale))


def date_attrs() -> dict[str, Any]:
    """A ``Date`` element's entry format, for ``el(..., **date_attrs())``: the hint as its placeholder, and in
    ``props`` the pattern the web app shows and reads the day in and the hint line under the field."""
    hint = entry_hint()
    return {"placeholder": hint, "props": {"format": entry_pattern(), "hint": _("Format: {pattern}", pattern=hint)}}
