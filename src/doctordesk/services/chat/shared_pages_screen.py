"""The chat page a client was last handed, kept where every process on a shared bus can read it (the Unix-socket
broker of ``serve --workers N``, or Redis), so a send or poll that reaches another process than the one that made
the client's page builds on that page (``screens/chat/append.py``) instead of rendering the chat again.

Each process keeps the pages it hands out in its own page cache, by content hash. The append path needs the page
the client's state token names: without it the chat is rendered again and diffed (measured with two workers: 44-52 %
of the sends when connections split between them; docs/benchmarks.md, Workers). So after every chat answer the
page is also stored on the bus, one value per user, chat and client (``chat-page:<user>:<appointment>:<client>``,
the client id of the request, ``X-Client-Id``: the latest page replaces the one before; without a client id one
value per user and chat, so a user's second such client on the same chat makes the other's next answer render),
with the page's content hash and an expiry of the screens' maximum age (an older page is not built on anyway). A
process that misses the page in its cache takes it from the bus when the hash is the one the token names. The
answer that handed the page out leaves once the bus holds it (``remember`` returns then), so the client's next
request finds it whichever process it reaches.

What a stored page can do is no more than what the state token already allows: the token is checked (sealed for
this user and screen, young enough) before the page is looked up, the page is used only when its hash is the
token's, and the append path then checks the page's window against the database as for a cached page. The bus's
store is the owner's (socket mode 0600) or Redis's, whose readers can already make state tokens.
"""

from __future__ import annotations

from typing import Any

import orjson

from doctordesk.domain.roles import Actor
from doctordesk.realtime.shared import SharedBus
from doctordesk.runtime import Runtime
from doctordesk.screens.hashing import canonical_with
from doctordesk.screens.state import Token, current_client


def _key(actor: Actor, appointment_id: int) -> str:
    client = current_client.get()
    return f"chat-page:{actor.user_id}:{appointment_id}" + (f":{client}" if client else "")


async def keep(rt: Runtime, actor: Actor, appointment_id: int, token: Token | None) -> None:
    """Store the page ``token`` names (in this process's page cache) for the other processes on the bus."""
    if token is None or not isinstance(rt.bus, SharedBus):
        return
    entry = rt.screens.cache.entry(token.content)
    if entry is None:
        return
    # The canonical JSON the page was hashed by: most of it (the messages) is known already, not serialized again.
    value = f"{token.content}\n{canonical_with(*entry)}"
    await rt.bus.remember(_key(actor, appointment_id), value, ttl_seconds=rt.settings.screen_max_age_seconds)


async def fetch(rt: Runtime, actor: Actor, appointment_id: int, token: Token) -> None:
    """When this process does not have the page ``token`` (already checked) names, take it from the bus into its
    page cache, if the page stored there for this user and chat is that one."""
    if not isinstance(rt.bus, SharedBus) or rt.screens.cache.entry(token.content) is not None:
        return
    value = await rt.bus.recall(_key(actor, appointment_id))
    if value is None:
        return
    content, _, body = value.partition("\n")
    if content != token.content:
        return
    try:
        elements: list[dict[str, Any]] = orjson.loads(body)
    except ValueError:
        return
    rt.screens.cache.put(content, elements)
    rt.metrics.chat_pages_from_bus.inc()
