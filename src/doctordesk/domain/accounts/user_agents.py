"""What a session's device is called on the security page (docs/accounts.md#security-page): the client that signed
in and the system it runs on, read from its ``User-Agent`` header with ``ua-parser`` (Firefox, Windows). The header
itself is never kept: only the two names are stored with the token, apart, and put into words ("Firefox on Windows",
"Firefox unter Windows") when a page is written in its reader's language (``in_words``).

The parser is ua-parser's built-in rules behind the best resolver installed (the Rust one, with
``ua-parser[regex]``), without the library's cache (which would keep the raw headers it saw in memory). Loading the
rules takes about half a second: the first sign-in of a process pays it (in a worker thread, web/deps.py)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ua_parser import BestAvailableResolver, Domain, Parser, load_builtins

from doctordesk.domain.texts import Text

# A longer header is cut before it is parsed: real browsers send about 150 characters.
MAX_HEADER_CHARS = 512
# A stored name (each of the access token's two columns), and a description as shown in any language.
MAX_DEVICE_CHARS = 120
# What the rules call a client or system they do not know.
_UNKNOWN = frozenset({"", "other"})

_lock = threading.Lock()
_parser: Parser | None = None


@dataclass(frozen=True, slots=True)
class SessionDevice:
    """What signed in: the client's and the system's names (product names, never translated), None when not
    known. ``whole``: a description stored in one piece by a version that did not keep the names apart, shown as it
    is (rows from before migration ``accounts_0004`` it could not split)."""

    client: str | None = None
    system: str | None = None
    whole: str | None = None


def _loaded() -> Parser:
    global _parser
    with _lock:
        if _parser is None:
            _parser = Parser(BestAvailableResolver(load_builtins()))
        return _parser


def _clean(family: str | None) -> str | None:
    """A family name as stored: one line of printable characters of at most ``MAX_DEVICE_CHARS``, None for an
    unknown one (some rules name a client by what its header says)."""
    if family is None:
        return None
    text = " ".join("".join(c if c.isprintable() else " " for c in family).split())[:MAX_DEVICE_CHARS].rstrip()
    return None if text.lower() in _UNKNOWN else text


def device(client: str | None, system: str | None) -> SessionDevice | None:
    """The device of a client and system family as the rules name them (each cleaned), None when neither is known."""
    found = SessionDevice(_clean(client), _clean(system))
    return found if found.client or found.system else None


def describe(user_agent: str | None) -> SessionDevice | None:
    """The device of a ``User-Agent`` header (``device``), None when there is none or nothing of it is known."""
    if not user_agent:
        return None
    result = _loaded()(user_agent[:MAX_HEADER_CHARS], Domain.USER_AGENT | Domain.OS)
    return device(
        result.user_agent.family if result.user_agent is not None else None,
        result.os.family if result.os is not None else None,
    )


def in_words(known: SessionDevice | None) -> str | None:
    """A device as a page says it: "{client} on {system}" as a ``Text`` (translated where it is shown), the known
    name alone when the other is not known (a name has no words to translate), a description stored whole as it is,
    None when nothing is known. Shown through ``i18n.stored`` and cut to ``MAX_DEVICE_CHARS`` after translation
    (screens/security.py ``device_text``)."""
    if known is None:
        return None
    if known.client and known.system:
        return Text("{client} on {system}", client=known.client, system=known.system)
    return known.client or known.system or known.whole or None
