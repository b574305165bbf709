"""The administration's waitlist screen (``screens/admin/waitlist.py``): read only, admins only; it changes with
every waitlist change (the ``waitlist`` topic) besides the administration's and the clinic's topics."""

from __future__ import annotations

from sqlalchemy import or_, select

from doctordesk.domain.events import ADMIN_TOPIC, CLINIC_TOPIC
from doctordesk.domain.roles import Actor
from doctordesk.domain.waitlist.rules import EntryState, OfferState
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import waitlist as screen
from doctordesk.screens.protocol import Layout, Page
from doctordesk.screens.state import Shown, Viewer
from doctordesk.screens.viewing import Viewing
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.scheduling.options_screen import doctor_options
from doctordesk.services.screen_base import clinic_zone, require_admin
from doctordesk.services.waitlist.entries import waitlist_topic
from doctordesk.store.tables import Patient
from doctordesk.store.waitlist.tables import WaitlistEntry, WaitlistOffer, WaitlistTime


def waitlist_page(
    rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None, doctor_id: int | None = None
) -> Viewing:
    require_admin(actor)

    async def render() -> Page:
        async with rt.db.read() as session:
            c = await cached_clinic(rt, session)
            doctor = doctor_id if doctor_id in c.directory.doctors else next(iter(c.directory.doctors), None)
            places = [loc for d, loc in c.work_hours if d == doctor]
            rows = (
                await session.execute(
                    select(WaitlistEntry, Patient.name)
                    .join(Patient, Patient.id == WaitlistEntry.patient_id)
                    .where(
                        WaitlistEntry.state == EntryState.WAITING,
                        or_(
                            WaitlistEntry.doctor_id == doctor,
                            WaitlistEntry.doctor_id.is_(None) & WaitlistEntry.location_id.in_(places),
                        ),
                    )
                    .order_by(WaitlistEntry.created_at, WaitlistEntry.id)
                )
            ).all()
            offers = dict(
                (
                    await session.execute(
                        select(WaitlistOffer.entry_id, WaitlistTime.start_at)
                        .join(WaitlistTime, WaitlistTime.id == WaitlistOffer.time_id)
                        .where(
                            WaitlistOffer.entry_id.in_([e.id for e, _ in rows]),
                            WaitlistOffer.state == OfferState.OPEN,
                        )
                    )
                ).all()
            )
        zone = c.directory.locations
        waiting = [
            screen.Waiting(
                e.id,
                name,
                c.location_names.get(e.location_id, ""),
                e.service,
                e.doctor_id is None,
                e.until,
                e.created_at,
                screen.offered_text(offers[e.id], zone.get(e.location_id, "UTC")) if e.id in offers else None,
            )
            for e, name in rows
        ]
        return screen.render(
            waiting,
            doctor_id=doctor,
            doctors=doctor_options(c),
            zone=clinic_zone(c.directory.locations),
            layout=layout,
            timeout=rt.settings.poll_list_seconds,
        )

    shown = Shown(screen.SCREEN, screen.ENDPOINT, (ADMIN_TOPIC, CLINIC_TOPIC, waitlist_topic()))
    return Viewing(rt.screens, rt.wall(), Viewer.of(actor, client_id), shown, rt.settings.poll_list_seconds, render)
