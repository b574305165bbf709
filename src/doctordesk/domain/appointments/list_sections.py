"""The sections of an appointment list: which appointments each holds and in which order.

Every section is read on its own terms, so a long history never pushes current work off the screen:

- ``needs-decision``: requests whose time has not come, soonest first;
- ``waiting``: alternatives sent to the patient whose (original) time has not come, soonest first;
- ``upcoming``: approved appointments that have not ended, soonest first;
- ``past``: everything else (ended, declined, canceled, completed, expired requests and offers), newest first.

A visit lasts at most ``MAX_VISIT``: the lists find the approved appointments under way among those that started
within it (docs/appointment-list.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from datetime import datetime, timedelta
from enum import StrEnum

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.appointments.views import AppointmentView
from doctordesk.domain.edges import earliest, today_edge

MAX_VISIT = timedelta(hours=12)


class Section(StrEnum):
    NEEDS_DECISION = "needs-decision"
    WAITING = "waiting"
    UPCOMING = "upcoming"
    PAST = "past"

    @property
    def newest_first(self) -> bool:
        return self is Section.PAST


def section_of(view: AppointmentView, now: datetime) -> Section:
    """The one section an appointment belongs to at ``now``."""
    if view.status is Status.REQUESTED and view.start > now:
        return Section.NEEDS_DECISION
    if view.status.is_pending_response and view.start > now:
        return Section.WAITING
    if view.status is Status.APPROVED and view.end > now:
        return Section.UPCOMING
    return Section.PAST


def list_edge(
    shown: Iterable[AppointmentView], now: datetime, *, under_way_ends: Iterable[datetime] = ()
) -> datetime | None:
    """When time alone next changes a list showing ``shown`` at ``now``: a shown appointment starts or ends (it
    changes section, or a section's count changes) or its "Today" turns over, or an appointment under way ends
    (``under_way_ends``: all of them, shown or not, since each is counted).

    Each section is read soonest first, so the next appointment of a section to start is always among those
    shown; appointments further down start later still and leave their section only after it."""
    moments = itertools.chain.from_iterable(
        (v.start, v.end, today_edge(v.start, v.location.timezone, now)) for v in shown
    )
    return earliest(itertools.chain(moments, under_way_ends), after=now)
