"""Dates, times and money the way the clinics write them: British English (``en_GB``) and German (``de_DE``).

The locale's language is the request's (``current()``); the region is the clinics' (Berlin, Munich, London):
English readers get day-month order and a 24-hour clock, German readers German names and decimal commas.
"""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Final
from zoneinfo import ZoneInfo

from babel.dates import format_date as _format_date
from babel.dates import format_datetime as _format_datetime
from babel.numbers import format_currency

from doctordesk.i18n.locale import DEFAULT, current

CLINIC_LOCALES: Final = {"en": "en_GB", "de": "de_DE"}
_MOMENT: Final = {"en": "EEE dd MMM y, HH:mm z", "de": "EEE, d. MMM y, HH:mm z"}  # the zone last
_MOMENT_SECONDS: Final = {"en": "EEE dd MMM y, HH:mm:ss z", "de": "EEE, d. MMM y, HH:mm:ss z"}
_WALL: Final = {"en": "EEE dd MMM y, HH:mm", "de": "EEE, d. MMM y, HH:mm"}
_DAY: Final = {"en": "EEE dd MMM", "de": "EEE, d. MMM"}
_FULL_DAY: Final = {"en": "dd MMM y", "de": "d. MMM y"}


def clinic_locale(locale: str | None = None) -> str:
    return CLINIC_LOCALES.get(locale or current(), CLINIC_LOCALES[DEFAULT])


def format_local(moment: datetime, timezone: str, locale: str | None = None, *, seconds: bool = False) -> str:
    """E.g. ``Mon 23 Nov 2026, 09:30 CET`` or ``Mo., 23. Nov. 2026, 09:30 MEZ`` in the given timezone (``seconds``:
    ``09:30:05``, for records such as the audit trail)."""
    # The text has no fraction of a second (and no seconds without ``seconds``): every moment of one local minute
    # (second) shares it and its cache entry, so a new chat message's time is rarely formatted anew.
    local = moment.astimezone(ZoneInfo(timezone))
    local = local.replace(microsecond=0) if seconds else local.replace(second=0, microsecond=0)
    # The cache's key is the instant in UTC: two local times of one zone compare and hash alike when they differ
    # only in ``fold`` (02:30 CEST and 02:30 CET, the hour the clocks go back), and would share one entry.
    return _format_local(local.astimezone(UTC), timezone, locale or current(), seconds)


# Screens show the same moments again and again (a chat's messages on every send and poll, a list's appointments):
# Babel's formatting was 7 % of a chat send's server time.
@functools.lru_cache(maxsize=8192)
def _format_local(moment: datetime, timezone: str, language: str, seconds: bool) -> str:
    zone = ZoneInfo(timezone)
    locale = clinic_locale(language)
    patterns = _MOMENT_SECONDS if seconds else _MOMENT
    text = _format_datetime(moment, patterns.get(language, patterns["en"]), tzinfo=zone, locale=locale)
    zone_name = _format_datetime(moment, "z", tzinfo=zone, locale=locale)
    if zone_name[:1] in "+-" or zone_name.startswith("GMT+") or zone_name.startswith("GMT-"):
        # No short name in this language (London in German): the zone's own abbreviation, e.g. GMT or BST.
        text = text[: len(text) - len(zone_name)] + (moment.astimezone(zone).tzname() or timezone)
    return text


def format_wall(moment: datetime, locale: str | None = None) -> str:
    """A local time as its own offset shows it, without a zone (``Mon 23 Nov 2026, 09:30`` /
    ``Mo., 23. Nov. 2026, 09:30``): for a time already at its location."""
    language = locale or current()
    pattern = _WALL.get(language, _WALL["en"])
    return _format_datetime(moment, pattern, tzinfo=moment.tzinfo, locale=clinic_locale(language))


def format_day(day: date, *, with_year: bool = False) -> str:
    """E.g. ``Mon 23 Nov`` / ``Mo., 23. Nov.`` (``23 Nov 2026`` / ``23. Nov. 2026`` with the year)."""
    patterns = _FULL_DAY if with_year else _DAY
    language = current()
    return _format_date(day, patterns.get(language, patterns["en"]), locale=clinic_locale(language))


def money(cents: int, currency: str, locale: str | None = None) -> str:
    """E.g. ``€60.00`` / ``60,00 €``; the amount and its symbol never wrap apart (a no-break space)."""
    text = format_currency(Decimal(cents) / 100, currency, locale=clinic_locale(locale))
    return text.replace(" ", "\u00a0")
