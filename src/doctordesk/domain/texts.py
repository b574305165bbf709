"""Texts for people, written in English where the rules produce them and translated where they are shown.

``N_("...")`` marks a fixed text for the catalog; ``Text("... {n} ...", n=2)`` is a text with values: a ``str``
(the English, so it behaves as before everywhere) that keeps its template and values, so the web layer can give it
in the reader's language (``doctordesk.i18n._``) without parsing it back.

A value may itself be a ``Text`` (a word the reader's language has its own word for, e.g. a status) or a
``Moment`` (an instant written in the reader's date format where it is shown). A text stored to be read later by
someone else (a notice) is kept as ``to_json``'s template and values, and read back with ``from_json``, so it is
written in the reader's language whenever it is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo


def N_(msgid: str) -> str:  # noqa: N802 - the gettext convention
    """Marks ``msgid`` for the catalog; it is translated where it is shown."""
    return msgid


@dataclass(frozen=True, slots=True)
class Moment:
    """An instant and the time zone it is shown in: a value of a ``Text``, formatted for each reader in their
    language where it is shown (its own English form, e.g. ``Mon 23 Nov 2026, 09:30 CET``, is the fallback)."""

    at: datetime
    timezone: str

    def __format__(self, spec: str) -> str:
        at = self.at if self.at.tzinfo else self.at.replace(tzinfo=UTC)  # a database's naive UTC
        try:
            local = at.astimezone(ZoneInfo(self.timezone))
        except (KeyError, ValueError):
            return f"{self.at.isoformat(timespec='minutes')} ({self.timezone})"
        return local.strftime("%a %d %b %Y, %H:%M ") + (local.tzname() or self.timezone)


class Text(str):
    """The English text, with its template (``msgid``) and values (``params``) for translation."""

    msgid: str
    params: dict[str, Any]

    def __new__(cls, msgid: str, **params: Any) -> Text:
        obj = super().__new__(cls, msgid.format(**params) if params else msgid)
        obj.msgid = msgid
        obj.params = params
        return obj


def to_json(text: str) -> dict[str, Any]:
    """A text as JSON: its template and values (a plain ``str`` is a template without values)."""
    if not isinstance(text, Text):
        return {"msgid": str(text)}
    params = {name: _value_to_json(value) for name, value in text.params.items()}
    return {"msgid": text.msgid, "params": params} if params else {"msgid": text.msgid}


def _value_to_json(value: Any) -> Any:
    if isinstance(value, Text):
        return {"text": to_json(value)}
    if isinstance(value, Moment):
        return {"moment": value.at.isoformat(), "timezone": value.timezone}
    if value is None or isinstance(value, bool | int | float):
        return value
    return str(value)


def from_json(data: Any) -> Text | None:
    """The text ``to_json`` wrote (None when ``data`` is not one)."""
    if not isinstance(data, dict) or not isinstance(data.get("msgid"), str):
        return None
    raw = data.get("params")
    params = {name: _value_from_json(value) for name, value in raw.items()} if isinstance(raw, dict) else {}
    template: str = data["msgid"]
    try:
        return Text(template, **params)
    except (KeyError, IndexError, ValueError):  # a template whose values are missing: not a text
        return None


def _value_from_json(value: Any) -> Any:
    if isinstance(value, dict) and "text" in value:
        return from_json(value["text"]) or ""
    if isinstance(value, dict) and "moment" in value:
        try:
            return Moment(datetime.fromisoformat(str(value["moment"])), str(value.get("timezone") or "UTC"))
        except ValueError:
            return str(value["moment"])
    return value
