"""The patient's waitlist screen (``screens/waitlist.py``): its page and poll, joining, leaving and answering offers,
each through the waitlist's services. Only patients; anyone else gets 404, as for a screen that is not theirs."""

from __future__ import annotations

from collections.abc import Mapping
from zoneinfo import ZoneInfo

from sqlalchemy import select

from doctordesk.domain.appointments.decisions import OPEN
from doctordesk.domain.edges import next_utc_midnight
from doctordesk.domain.events import CLINIC_TOPIC, patient_topic, user_topic
from doctordesk.domain.roles import Actor
from doctordesk.i18n import _
from doctordesk.i18n.formats import format_local
from doctordesk.runtime import Runtime
from doctordesk.screens import appointment_list
from doctordesk.screens import waitlist as screen
from doctordesk.screens.protocol import Layout, Option, Page, UpdateSet
from doctordesk.screens.state import Shown, Viewer, lasting
from doctordesk.screens.viewing import Viewing
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.scheduling.options_screen import doctor_options
from doctordesk.services.waitlist import accepting, entries
from doctordesk.store.tables import Appointment


def viewing(
    rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None, picked: Mapping[str, str] | None = None
) -> Viewing:
    """The waitlist screen as the patient ``actor`` sees it: it changes with their own topics (an offer made, taken
    by someone else or lapsed) and the clinic's (names, places)."""
    patient_id = entries.patient_of(actor)

    async def render() -> Page:
        now = rt.clock.now()
        waiting, offers = await entries.own_waitlist(rt, patient_id)
        async with rt.db.read() as session:
            c = await cached_clinic(rt, session)
            coming = (
                await session.execute(
                    select(Appointment.id, Appointment.start_at, Appointment.location_id)
                    .where(
                        Appointment.patient_id == patient_id,
                        Appointment.status.in_([int(s) for s in OPEN]),
                        Appointment.start_at > now,
                    )
                    .order_by(Appointment.start_at)
                    .limit(20)
                )
            ).all()
        zone = c.directory.locations
        held_of = {a_id: format_local(start, zone.get(loc, "UTC")) for a_id, start, loc in coming}
        places = {loc for _, loc in c.work_hours}
        page = screen.render(
            screen.WaitlistScreen(
                entries=[
                    screen.EntryView(
                        e.id,
                        c.directory.doctors.get(e.doctor_id) if e.doctor_id else None,
                        c.location_names.get(e.location_id, ""),
                        e.service,
                        e.until,
                        e.days,
                        e.time_from,
                        e.time_to,
                        format_local(e.held_start, zone.get(e.location_id, "UTC")) if e.held_start else None,
                    )
                    for e in waiting
                ],
                offers=[
                    screen.OfferView(
                        o.id,
                        c.directory.doctors.get(o.doctor_id, ""),
                        c.location_names.get(o.location_id, ""),
                        o.service,
                        format_local(o.start, zone.get(o.location_id, "UTC")),
                        screen.expiry_text(o.expires_at, o.start, zone.get(o.location_id, "UTC")),
                    )
                    for o in offers
                ],
                doctors=doctor_options(c),
                locations=[Option(str(i), n) for i, n in c.location_names.items() if i in places],
                held=[Option(str(a_id), when) for a_id, when in held_of.items()],
                today=now.astimezone(ZoneInfo("UTC")).date(),
                layout=layout,
                timeout=rt.settings.poll_list_seconds,
                picked=dict(picked or {}),
            )
        )
        # An offer lapses by time alone: the page changes then (and at midnight, the form's "today").
        edges = [o.expires_at for o in offers if o.expires_at > now] + [next_utc_midnight(now)]
        return lasting(page, min(edges))

    shown = Shown(screen.SCREEN, screen.ENDPOINT, (patient_topic(patient_id), user_topic(actor.user_id), CLINIC_TOPIC))
    return Viewing(rt.screens, rt.wall(), Viewer.of(actor, client_id), shown, rt.settings.poll_list_seconds, render)


def _told(update: UpdateSet, text: str, level: str = "info") -> UpdateSet:
    update.notice = {"level": level, "text": text}
    return update


async def join(rt: Runtime, actor: Actor, form: Mapping[str, str], *, page: Viewing, state: str | None) -> UpdateSet:
    """Join the waitlist; the screen with the new entry, and a notice."""
    await entries.join(rt, actor, form)
    return _told(await page.refresh(state), _("You are on the waitlist. We tell you as soon as a time frees up."))


async def leave(rt: Runtime, actor: Actor, entry_id: int, *, page: Viewing, state: str | None) -> UpdateSet:
    await entries.leave(rt, actor, entry_id)
    return _told(await page.refresh(state), _("You left the waitlist for this."))


async def decline(rt: Runtime, actor: Actor, offer_id: int, *, page: Viewing, state: str | None) -> UpdateSet:
    await accepting.decline(rt, actor, offer_id)
    return _told(await page.refresh(state), _("The time goes to the next patient. You stay on the waitlist."))


async def accept(rt: Runtime, actor: Actor, offer_id: int) -> UpdateSet:
    """Accept an offered time: the patient goes to their list, told what happens next."""
    done = await accepting.accept(rt, actor, offer_id)
    when = format_local(done.start, done.timezone)
    text = (
        _("Your appointment is moved to {when}.", when=when)
        if done.moved
        else _("Request sent for {when}. The doctor will confirm it or suggest other times.", when=when)
    )
    return UpdateSet(
        screen=screen.SCREEN,
        state="",
        timeout=rt.settings.poll_list_seconds,
        navigate=appointment_list.ENDPOINT,
        notice={"level": "info", "text": text},
    )
