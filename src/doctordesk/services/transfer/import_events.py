"""What an import tells the serving processes it changed (staged for them: ``realtime/relay.py``)."""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Protocol

from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import ALL_APPOINTMENTS_TOPIC, DomainEvent, clinic_changed
from doctordesk.domain.transfer.import_rows import Kind

IMPORTED = EventKind.APPOINTMENTS_IMPORTED  # the event of the appointments an import created or changed


class Changed(Protocol):
    created: int
    updated: int


def import_events(counts: Mapping[Kind, Changed], appointment_topics: Set[str]) -> list[DomainEvent]:
    """The clinic's reference data (every kind but appointments: names, places, hours, policies; patients' names
    show on every list) as one ``clinic.changed`` when any of it changed, and the appointments created or changed on
    ``appointment_topics`` (their own, their doctors' and patients', before and after) and every appointment's."""
    changed = {kind for kind, c in counts.items() if c.created or c.updated}
    events = [clinic_changed()] if changed - {Kind.APPOINTMENTS} else []
    if appointment_topics:
        events.append(DomainEvent(IMPORTED, (ALL_APPOINTMENTS_TOPIC, *sorted(appointment_topics))))
    return events
