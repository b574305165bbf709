"""The appointment list's filter: a status, a range of days and a patient-name search, and how a name is matched.

Matching rule: the search text is split into words; an appointment matches when every search word is the start
of some word of the patient's name, compared case-insensitively and ignoring accents: "mü" and "mu" both find
"Anna Müller", "anna m" finds her too, "nna" does not. Hyphens and apostrophes split words ("Meyer-Lansky" is
found by "lansky"). The name's words are kept folded in their own index (``patient_name_words``), so a search
reads index ranges, never the whole list.

The filter travels in the screen's URL (``?status=&from=&to=&q=``) for reload and Back, and in its state token
(``filter_token``) so every poll, real-time update and "show more" keeps it (docs/appointment-list.md).
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from doctordesk.domain import moments
from doctordesk.domain.appointments.status import Status, StatusName
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.texts import N_, Text

MAX_SEARCH_CHARS = 60
MAX_SEARCH_WORDS = 4
# A name word is indexed up to this many characters (longer search words are cut to it).
WORD_CHARS = 64

_WORD_SPLIT = re.compile(r"[\s\-'’.,]+")

STATUSES: dict[str, tuple[Status, ...]] = {
    StatusName.REQUESTED.value: (Status.REQUESTED,),
    StatusName.PENDING_RESPONSE.value: (Status.PENDING_RESPONSE, Status.PENDING_RESPONSE_COVERAGE_RISK),
    StatusName.APPROVED.value: (Status.APPROVED,),
    StatusName.DECLINED.value: (Status.DECLINED,),
    StatusName.CANCELED.value: (Status.CANCELED,),
    StatusName.COMPLETED.value: (Status.COMPLETED,),
    StatusName.NO_SHOW.value: (Status.NO_SHOW,),
}


def fold(text: str) -> str:
    """``text`` as names are compared: case-folded, accents dropped (NFKD without combining marks)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def name_words(name: str) -> set[str]:
    """The folded words of a patient's name, as the index keeps them."""
    return {w[:WORD_CHARS] for w in _WORD_SPLIT.split(fold(name)) if w}


def search_words(text: str) -> tuple[str, ...]:
    """The folded words of a search (each must start a word of the name), at most ``MAX_SEARCH_WORDS``."""
    words = sorted({w[:WORD_CHARS] for w in _WORD_SPLIT.split(fold(text)) if w})
    return tuple(words[:MAX_SEARCH_WORDS])


def prefix_end(word: str) -> str:
    """The smallest string after every string that starts with ``word`` (code point order): ``word`` with its last
    character raised by one, so "starts with" is the index range [word, prefix_end(word))."""
    return word[:-1] + chr(ord(word[-1]) + 1)


@dataclass(frozen=True, slots=True)
class ListFilter:
    status: str | None = None  # a key of STATUSES
    first: date | None = None  # first day shown (inclusive)
    last: date | None = None  # last day shown (inclusive)
    search: str = ""  # the search text as typed (trimmed)

    @property
    def active(self) -> bool:
        return bool(self.status or self.first or self.last or self.search)

    @property
    def statuses(self) -> tuple[Status, ...] | None:
        return STATUSES[self.status] if self.status else None

    @property
    def words(self) -> tuple[str, ...]:
        return search_words(self.search)

    def query(self) -> dict[str, str]:
        """The filter as the screen's URL query (empty parts left out)."""
        pairs = {
            "status": self.status,
            "from": self.first.isoformat() if self.first else None,
            "to": self.last.isoformat() if self.last else None,
            "q": self.search or None,
        }
        return {k: v for k, v in pairs.items() if v}


def _day(raw: str, name: str, fields: dict[str, str]) -> date | None:
    return moments.form_day(raw, name, fields, message=moments.FORM_DAY_MESSAGE)


def parse_filter(values: Mapping[str, str]) -> tuple[ListFilter, dict[str, str]]:
    """The filter a query or form names, and a message per field that is not acceptable."""
    fields: dict[str, str] = {}
    status = values.get("status", "").strip() or None
    if status is not None and status not in STATUSES:
        fields["status"] = Text("One of: {choices}.", choices=", ".join(STATUSES))
        status = None
    first = _day(values.get("from", ""), "from", fields)
    last = _day(values.get("to", ""), "to", fields)
    if first and last and last < first:
        fields["to"] = N_("Must not be before 'from'.")
    search = " ".join(values.get("q", "").split())
    problem = text_problem(values.get("q", ""), max_chars=MAX_SEARCH_CHARS)
    if problem:
        fields["q"] = problem
        search = ""
    return ListFilter(status, first, last, search), fields


# --- in the state token -----------------------------------------------------------------------------------------

FILTER_MARK = "!"


def filter_token(list_filter: ListFilter) -> str:
    """The filter as a state token suffix: ``!{status}.{from}.{to}.{search as base64url}`` (empty when none)."""
    if not list_filter.active:
        return ""
    search = base64.urlsafe_b64encode(list_filter.search.encode()).decode().rstrip("=")
    parts = (
        list_filter.status or "",
        list_filter.first.isoformat() if list_filter.first else "",
        list_filter.last.isoformat() if list_filter.last else "",
        search,
    )
    return FILTER_MARK + ".".join(parts)


def split_filter(token: str | None) -> tuple[str | None, ListFilter]:
    """The rest of a state token and the filter it carries; a malformed filter counts as none."""
    if not token or FILTER_MARK not in token:
        return token, ListFilter()
    rest, _, suffix = token.rpartition(FILTER_MARK)
    parts = suffix.split(".")
    if len(parts) != 4:
        return rest, ListFilter()
    try:
        search = base64.urlsafe_b64decode(parts[3] + "=" * (-len(parts[3]) % 4)).decode()
    except (binascii.Error, ValueError):
        return rest, ListFilter()
    f, fields = parse_filter({"status": parts[0], "from": parts[1], "to": parts[2], "q": search})
    return rest, (ListFilter() if fields else f)
