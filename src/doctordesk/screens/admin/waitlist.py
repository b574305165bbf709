"""The administration's waitlist screen: who waits for a doctor (their own entries, and those for any doctor at a
place where the doctor works), in order of waiting, with the time offered to each now (docs/waitlist.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from doctordesk.domain.scheduling.booking import SERVICES
from doctordesk.i18n import _
from doctordesk.i18n.formats import format_day, format_local
from doctordesk.screens.admin.pages import BASE, page
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

SCREEN = "admin-waitlist"
ENDPOINT = f"{BASE}/waitlist"


@dataclass(frozen=True, slots=True)
class Waiting:
    entry_id: int
    patient: str
    place: str
    service: str
    any_doctor: bool
    until: date
    joined_at: datetime
    offered: str | None  # the time offered now, as text


def _row(n: int, w: Waiting, zone: str) -> Element:
    who = _(
        "{n}. {patient} · {service} at {place}",
        n=n,
        patient=w.patient,
        service=_(SERVICES.get(w.service, w.service)),
        place=w.place,
    )
    since = _(
        "Waiting since {when}, until {until}",
        when=format_local(w.joined_at, zone),
        until=format_day(w.until, with_year=True),
    )
    extra = [el(f"waiting-{w.entry_id}-any", "Caption", value=_("Any doctor"))] if w.any_doctor else []
    if w.offered:
        extra.append(el(f"waiting-{w.entry_id}-offer", "Caption", value=_("Offered now: {when}", when=w.offered)))
    return el(
        f"waiting-{w.entry_id}",
        "Row",
        el(f"waiting-{w.entry_id}-who", "Regular", value=who),
        el(f"waiting-{w.entry_id}-since", "Caption", value=since),
        *extra,
    )


def render(
    rows: Sequence[Waiting],
    *,
    doctor_id: int | None,
    doctors: Sequence[Option],
    zone: str,
    layout: Layout,
    timeout: int,
) -> Page:
    """The page; ``zone`` is the clinic's, the administration's zone for moments (when each began waiting)."""
    choose = el(
        "choice",
        "Group",
        *(
            el(f"doctor-{o.value}", "Link", label=o.label, highlighted=o.value == str(doctor_id),
               action=Action("PUT", f"{ENDPOINT}?doctor={o.value}"))
            for o in doctors
        ),
        label=_("Whose waitlist"),
    )  # fmt: skip
    waiting = el(
        "waiting",
        "Section",
        el("waiting-empty", "Caption", value=_("Nobody is waiting."), visible=not rows),
        *(_row(n, w, zone) for n, w in enumerate(rows, start=1)),
        label=_("In order of waiting"),
    )
    return page(
        screen=SCREEN,
        current="waitlist",
        title=_("Waitlist"),
        endpoint=ENDPOINT,
        elements=[choose, waiting],
        layout=layout,
        timeout=timeout,
    )


def offered_text(start: datetime, timezone: str) -> str:
    return format_local(start, timezone)
