"""Finding English left in a German screen: the same page rendered for an English and a German reader, and every
text a person reads on it (titles, labels, shown values, options, confirmations) compared. A text the German page
shows exactly as the English one is a leftover unless it is

- data: a value stored in the database (names, addresses, time zones, the insurer's record, chat messages ...),
  except the columns that hold our own texts (notices, a disabled endpoint's reason, pushes);
- a text whose German is the same word ("Name", "Status", "Webhooks"), by the catalog;
- a code shown as it is (webhook event types, IANA time zones, an export's file name, a field's key such as
  `delivery_id`, an authenticator app's key), an image's data, a record's stored details as JSON, or no words at
  all (numbers, dates).

Texts joined from parts (" · ", ", ", ": ") are judged part by part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import String, Text, select

from doctordesk.domain.scheduling.suggestions import TIMEZONES
from doctordesk.domain.webhooks.rules import SUBSCRIBABLE
from doctordesk.i18n import catalog
from doctordesk.screens.protocol import walk
from doctordesk.store.schema import metadata

# Element types whose value is an input's content (a code or what was typed), not a text the screen writes.
INPUTS = frozenset({"Combo", "Edit", "Date", "Time", "Checkbox", "Password", "Hidden", "Timezone", "Upload"})
# Columns that hold texts the service wrote for people: exactly what must not pass as data.
OUR_TEXTS = {
    ("user_notices", "text"),
    ("admin_notices", "text"),
    ("webhook_endpoints", "disabled_reason"),
    ("push_outbox", "text"),
    ("webhook_deliveries", "last_error"),
}
CODES = {*SUBSCRIBABLE, *TIMEZONES, "audit.csv", "audit.jsonl"}
_WORD = re.compile(r"[A-Za-z]{2,}")
_PARTS = re.compile(r" · |, |: | \(|\)|\n| → ")
# A field's key shown as it is (the audit trail's details name fields without words that way).
_IDENTIFIER = re.compile(r"[a-z]+(_[a-z]+)+")
# An authenticator app's key as the security page writes it: base32 in groups of four.
_KEY = re.compile(r"[A-Z2-7]{4}( [A-Z2-7]{1,4})+")
# Elements whose value is no text for a person (an image's data: URL; its label is judged).
NOT_TEXT = frozenset({"Image"})


def shown_texts(page: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """Every text the page shows a person, keyed by element and attribute."""
    out: dict[tuple[str, str], str] = {}
    if isinstance(page.get("title"), str):
        out[("page", "title")] = page["title"]
    for e in walk(page["elements"]):
        for attr in ("label", "placeholder", "error", "warning"):
            if isinstance(e.get(attr), str):
                out[(e["id"], attr)] = e[attr]
        if e["type"] not in INPUTS | NOT_TEXT and isinstance(e.get("value"), str):
            out[(e["id"], "value")] = e["value"]
        for i, option in enumerate(e.get("options") or ()):
            out[(e["id"], f"option {i}")] = option["label"]
        confirm = (e.get("action") or {}).get("confirm")
        if confirm:
            out[(e["id"], "confirm")] = confirm
    return out


def same_in_german() -> list[re.Pattern[str]]:
    """The catalog's texts whose German is the English (their values may be anything)."""
    patterns = []
    for message in catalog.load("de"):
        if message.id and message.string == message.id:
            parts = re.split(r"\{\w*\}", message.id)
            patterns.append(re.compile(".+".join(re.escape(p) for p in parts) + r"\Z"))
    return patterns


async def stored_values(runtime: Any) -> set[str]:
    """Every text stored in the database but our own texts: the data a screen may show as it is."""
    values: set[str] = set()
    async with runtime.db.read() as session:
        for table in metadata.sorted_tables:
            columns = [
                c for c in table.columns if isinstance(c.type, String | Text) and (table.name, c.name) not in OUR_TEXTS
            ]
            if not columns:
                continue
            for row in (await session.execute(select(*columns))).all():
                values.update(v for v in row if isinstance(v, str) and v)
    return values


def _fine(text: str, data: set[str], same: list[re.Pattern[str]]) -> bool:
    if text in data or text in CODES or not _WORD.search(text) or _IDENTIFIER.fullmatch(text) or _KEY.fullmatch(text):
        return True
    if text.startswith("{") and text.endswith(("}", "…")):
        return True  # stored details shown as JSON
    return any(p.match(text) for p in same)


def leftovers(
    english: Mapping[str, Any], german: Mapping[str, Any], *, data: set[str], same: list[re.Pattern[str]]
) -> list[tuple[str, str, str]]:
    """(element, attribute, text) of every text the German page shows in English."""
    en = shown_texts(english)
    found = []
    for key, text in shown_texts(german).items():
        if en.get(key) != text or _fine(text, data, same):
            continue
        parts = [p.strip() for p in _PARTS.split(text) if p and p.strip()]
        if len(parts) > 1 and all(_fine(p, data, same) for p in parts):
            continue
        found.append((key[0], key[1], text))
    return found


def describe(found: Iterable[tuple[str, str, str]]) -> str:
    return "\n".join(f"  {element}.{attr}: {text!r}" for element, attr, text in found)
