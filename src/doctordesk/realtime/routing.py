"""Which real-time message a client's active screen gets for an event: a pure function of the event's topics and
the screen (its poll endpoint and the topics it shows). The table is in docs/realtime.md.

Topics are of two kinds here:

* *content* topics (a chat thread): new items the screen fetches by PATCHing its poll endpoint at once, without
  disturbing the poll schedule → ``<endpoint>``;
* every other topic is *state* the screen shows (statuses, unread indicators, offers) → ``Timeout``: the client
  resets its timers and polls its screen, which restarts the schedule from the fresh state.

An event touching both kinds on one screen gets ``Timeout <endpoint>``; an event touching none gets nothing.

*Quiet* topics (the clinic's reference data) send nothing: a change there concerns nearly every open screen at
once, and a ``Timeout`` to all of them would bring every client's poll in the same second. The change check still
sees them, so each screen renders again at its own next poll, spread over one poll interval.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from doctordesk.domain.events import CLINIC_TOPIC
from doctordesk.realtime.message import RealtimeMessage

CONTENT_TOPIC_PREFIXES = ("thread:",)
QUIET_TOPICS = frozenset({CLINIC_TOPIC})


@dataclass(frozen=True, slots=True)
class Screen:
    """A client's active screen, as its last PUT gave it (or a poll, when this instance knew none)."""

    user_id: int
    screen: str
    poll: str
    topics: tuple[str, ...]


def is_content_topic(topic: str) -> bool:
    return topic.startswith(CONTENT_TOPIC_PREFIXES)


def routed(topics: Collection[str]) -> tuple[str, ...]:
    """The topics of an event that may send a message (all but the quiet ones)."""
    return tuple(t for t in topics if t not in QUIET_TOPICS)


def message_for(event_topics: Collection[str], screen: Screen) -> RealtimeMessage | None:
    """The message for a client on ``screen`` when an event touching ``event_topics`` happened; None: nothing."""
    content = state = False
    for topic in screen.topics:
        if topic in event_topics and topic not in QUIET_TOPICS:
            if is_content_topic(topic):
                content = True
            else:
                state = True
    if not content and not state:
        return None
    return RealtimeMessage(timeout=state, endpoint=screen.poll if content else None)
