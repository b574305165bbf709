"""Where the demo clinic's appointments and offers go: a consistent calendar whatever day and time it is seeded.

The demo describes its appointments as "in 2 days at 09:00" and its offers as "the working days after the
appointment". Taken literally, some seeding days put two of a doctor's appointments or offers at the same time, or
one on a day the doctor does not work at that location (the weekend moved to Monday, Dr. Berger's Munich hours on
Tuesdays and Thursdays only). So every time is placed on the first day, from the described one on (backwards for
the past), where the scheduling rules' own checks (``domain.scheduling.suggestions``) pass: the whole appointment
inside the doctor's hours at the location, on its local date, and no overlap with any other time the doctor holds
(requests, approved, pending and completed appointments and open offers; a canceled or declined one holds nothing). A
wall time a clock change skips is never chosen. On a day the demo's description already fits, the time is the described
one, so the demo's dates stay what they always were.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from doctordesk.domain.scheduling.suggestions import Hours, Proposal, local_to_utc, overlaps, within_hours

# Far more than the demo ever needs (a week holds every doctor's times): a bound, so a wrong table cannot loop.
MAX_DAYS = 60


@dataclass(frozen=True, slots=True)
class Held:
    doctor_id: int
    start: datetime
    end: datetime


@dataclass
class DemoCalendar:
    """The demo's hours (by doctor and location), the locations' time zones, and the times placed so far."""

    hours: Mapping[tuple[int, int], Sequence[Hours]]
    zones: Mapping[int, str]
    held: list[Held] = field(default_factory=list)

    def hold(self, doctor_id: int, start: datetime, minutes: int) -> None:
        """A time the doctor already holds (an existing appointment)."""
        self.held.append(Held(doctor_id, start, start + timedelta(minutes=minutes)))

    def fits(self, proposal: Proposal) -> bool:
        """Inside the doctor's hours at the location and clear of every time the doctor holds."""
        hours = self.hours.get((proposal.doctor_id, proposal.location_id), ())
        if not within_hours(proposal, self.zones[proposal.location_id], hours):
            return False
        return not any(
            h.doctor_id == proposal.doctor_id and overlaps(h.start, h.end, proposal.start, proposal.end)
            for h in self.held
        )

    def place(
        self,
        *,
        doctor_id: int,
        location_id: int,
        day: date,
        at: time,
        minutes: int,
        holds: bool = True,
        backwards: bool = False,
    ) -> datetime:
        """The start (UTC) at wall time ``at`` on ``day`` or the first day after it (before it, ``backwards``)
        where it fits; held from now on unless ``holds`` is false (a canceled or declined appointment)."""
        step = timedelta(days=-1 if backwards else 1)
        for _ in range(MAX_DAYS):
            start = local_to_utc(day, at, self.zones[location_id])
            if start is not None:
                proposal = Proposal(0, doctor_id, location_id, start, minutes)
                if self.fits(proposal):
                    if holds:
                        self.hold(doctor_id, start, minutes)
                    return start
            day += step
        raise ValueError(f"no day within {MAX_DAYS} for doctor {doctor_id} at location {location_id} at {at}")
