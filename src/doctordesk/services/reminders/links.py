"""The links of a reminder (docs/notifications.md#reminders): "I will come" and "I need to cancel".

A link carries a random token (32 bytes); only its SHA-256 is stored, as for password links. It works once, until
the appointment's start, and only while the appointment is approved at the time the reminder was for. Opening it
(``look``) changes nothing (mail scanners open links); the page's button (``use``) confirms, or cancels through the
patient's own cancellation with its deadline (``DOCTORDESK_PATIENT_CANCEL_HOURS``).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.decisions import patient_may_cancel
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import DomainError
from doctordesk.domain.roles import Actor, Role
from doctordesk.i18n import DEFAULT
from doctordesk.runtime import Runtime
from doctordesk.services.accounts.auth import token_hash
from doctordesk.services.reminders import confirm
from doctordesk.services.review.patient_cancel import cancel_appointment
from doctordesk.services.uow import unit_of_work
from doctordesk.store.mail_tables import ReminderLink
from doctordesk.store.tables import Appointment, Location, Patient, User

CONFIRM, CANCEL = "confirm", "cancel"
PATH = "/reminder/"
TOKEN_BYTES = 32
MAX_TOKEN_CHARS = 128


class State(StrEnum):
    READY = "ready"  # the page asks to confirm with its button
    CONFIRMED = "confirmed"  # done: the patient said they will come
    CANCELED = "canceled"  # done: the appointment is canceled
    USED = "used"
    EXPIRED = "expired"  # the appointment has started
    INVALID = "invalid"  # unknown (forged, mistyped)
    CHANGED = "changed"  # the appointment moved or is no longer approved: the link no longer applies
    TOO_LATE = "too-late"  # past the clinic's cancellation deadline: call the clinic
    NO_ACCOUNT = "no-account"  # the patient has no account to cancel in: call the clinic


@dataclass(frozen=True, slots=True)
class LinkView:
    state: State
    action: str = CONFIRM
    language: str = DEFAULT
    doctor: str = ""
    start: datetime | None = None
    timezone: str = "UTC"
    location: str = ""
    cancel_hours: int = 0
    has_account: bool = True  # the patient has an account in the app (a cancellation is theirs)


def issue(session: AsyncSession, appointment_id: int, *, start: datetime, now: datetime) -> dict[str, str]:
    """A confirm and a cancel link for the appointment at ``start`` (in the caller's transaction): their tokens."""
    tokens = {}
    for action in (CONFIRM, CANCEL):
        token = secrets.token_urlsafe(TOKEN_BYTES)
        tokens[action] = token
        session.add(
            ReminderLink(
                token_hash=token_hash(token), appointment_id=appointment_id, action=action, start_at=start,
                created_at=now, expires_at=start,
            )
        )  # fmt: skip
    return tokens


def url(base: str, token: str) -> str:
    return base.rstrip("/") + PATH + token


async def _read(session: AsyncSession, token: str, *, lock: bool) -> tuple[ReminderLink, Appointment, LinkView] | None:
    if not token or len(token) > MAX_TOKEN_CHARS:
        return None
    query = select(ReminderLink).where(ReminderLink.token_hash == token_hash(token))
    link = await session.scalar(query.with_for_update() if lock else query)
    if link is None:
        return None
    appointments = select(Appointment).where(Appointment.id == link.appointment_id)
    a = await session.scalar(appointments.with_for_update() if lock else appointments)
    if a is None:
        return None
    doctor = User.__table__.alias("doctor")
    row = (
        await session.execute(
            select(User.id, User.language, doctor.c.display_name, Location.name, Location.timezone)
            .select_from(Patient)
            .outerjoin(User, User.id == Patient.user_id)
            .join(doctor, doctor.c.id == a.doctor_id)
            .join(Location, Location.id == a.location_id)
            .where(Patient.id == a.patient_id)
        )
    ).one()
    user_id, language, doctor_name, location, zone = row
    view = LinkView(
        State.READY, action=link.action, language=language or DEFAULT, doctor=doctor_name, start=a.start_at,
        timezone=zone, location=location, has_account=user_id is not None,
    )  # fmt: skip
    return link, a, view


def _state(link: ReminderLink, a: Appointment, *, now: datetime, cancel_hours: int) -> State:
    if link.used_at is not None:
        return State.USED
    if now >= link.expires_at:
        return State.EXPIRED
    if a.status != int(Status.APPROVED) or a.start_at != link.start_at:
        return State.CHANGED
    if link.action == CANCEL and not patient_may_cancel(Status(a.status), a.start_at, now=now, hours=cancel_hours):
        return State.TOO_LATE
    return State.READY


async def look(rt: Runtime, token: str) -> LinkView:
    """What the link is for and whether it can be used now; changes nothing."""
    hours = rt.settings.patient_cancel_hours
    async with rt.db.read() as session:
        found = await _read(session, token, lock=False)
        if found is None:
            return LinkView(State.INVALID)
        link, a, view = found
        state = _state(link, a, now=rt.clock.now(), cancel_hours=hours)
        if state is State.READY and link.action == CANCEL and not view.has_account:
            state = State.NO_ACCOUNT
        return replace(view, state=state, cancel_hours=hours)


async def use(rt: Runtime, token: str) -> LinkView:
    """The page's button: confirm, or cancel; the outcome (a refusal's state when the link cannot be used)."""
    view = await look(rt, token)
    if view.state is not State.READY:
        return view
    if view.action == CONFIRM:
        return await _confirm(rt, token, view)
    return await _cancel(rt, token, view)


async def _confirm(rt: Runtime, token: str, seen: LinkView) -> LinkView:
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        found = await _read(uow.session, token, lock=True)
        if found is None:
            return replace(seen, state=State.INVALID)
        link, a, view = found
        state = _state(link, a, now=now, cancel_hours=rt.settings.patient_cancel_hours)
        if state is not State.READY:
            return replace(seen, state=state)
        link.used_at = now
        await confirm.record(uow, a, now=now)
    return replace(seen, state=State.CONFIRMED)


async def _cancel(rt: Runtime, token: str, seen: LinkView) -> LinkView:
    async with rt.db.read() as session:
        found = await _read(session, token, lock=False)
        assert found is not None
        _link, a, _view = found
        user = await session.scalar(
            select(User).join(Patient, Patient.user_id == User.id).where(Patient.id == a.patient_id)
        )
    if user is None or not user.active:
        return replace(seen, state=State.NO_ACCOUNT)
    actor = Actor(
        user.id, user.username, Role.PATIENT, user.display_name, patient_id=a.patient_id, language=user.language
    )
    try:
        await cancel_appointment(rt, actor, a.id, version=None, reason="")
    except DomainError:
        # Changed between the page and the button (canceled elsewhere, moved, the deadline passed): say why.
        again = await look(rt, token)
        return again if again.state is not State.READY else replace(seen, state=State.CHANGED)
    async with unit_of_work(rt) as uow:
        session = uow.session
        await session.execute(
            update(ReminderLink)
            .where(ReminderLink.token_hash == token_hash(token), ReminderLink.used_at.is_(None))
            .values(used_at=rt.clock.now())
        )
    return replace(seen, state=State.CANCELED)
