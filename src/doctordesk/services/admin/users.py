"""Administration of accounts: create, edit, deactivate and reactivate users, set or reset their password, and
edit doctor profiles. Every change is audited with its before and after (services/audit/changes.py).

Deactivating a user (and setting a new password) revokes every token the user holds, in the same transaction,
and publishes the revocation logout uses for each: every instance forgets the tokens and closes their streams.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent, doctor_topic, thread_topic
from doctordesk.domain.mail.addresses import optional_address
from doctordesk.domain.names import check_name, name_problem
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.scheduling.suggestions import is_timezone
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.accounts import recovery
from doctordesk.services.accounts.auth import MAX_PASSWORD, MIN_PASSWORD
from doctordesk.services.audit.changes import record_change
from doctordesk.services.scheduling.clinic_facts import clinic_changed
from doctordesk.services.uow import UnitOfWork, unit_of_work
from doctordesk.store.admin_tables import DoctorSettings
from doctordesk.store.tables import Appointment, DoctorProfile, Patient, User

USERNAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
# The same rule as a client may type it, for the API description: the service folds case (``Bob`` is ``bob``).
USERNAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
MAX_NAME = 128  # a display name (the column's width)
GENERATED_PASSWORD_BYTES = 12  # 16 URL-safe characters


@dataclass(frozen=True, slots=True)
class DoctorView:
    specialty: str
    timezone: str | None
    can_prescribe: bool
    chat_enabled: bool


@dataclass(frozen=True, slots=True)
class UserView:
    id: int
    username: str
    role: str
    display_name: str
    active: bool
    created_at: datetime
    doctor: DoctorView | None
    patient_id: int | None
    email: str | None = None  # patients only: where the clinic's mail reaches them (docs/notifications.md)

    def audited(self) -> dict[str, Any]:
        """What the audit trail records of a user (never the password)."""
        data = asdict(self)
        data.pop("created_at")
        return data


@dataclass(frozen=True, slots=True)
class NewUser:
    username: str
    role: Role
    display_name: str
    password: str | None = None  # None: generate one, shown once
    specialty: str | None = None  # doctors only
    timezone: str | None = None
    can_prescribe: bool | None = None
    chat_enabled: bool | None = None
    email: str | None = None  # patients only


@dataclass(frozen=True, slots=True)
class DoctorChange:
    """A doctor profile edit; None leaves a field as it is."""

    display_name: str | None = None
    specialty: str | None = None
    timezone: str | None = None
    can_prescribe: bool | None = None
    chat_enabled: bool | None = None


async def _view(session: AsyncSession, user: User) -> UserView:
    doctor = None
    patient_id = email = None
    if user.role == Role.DOCTOR:
        profile = await session.get(DoctorProfile, user.id)
        settings = await session.get(DoctorSettings, user.id)
        if profile is not None:
            doctor = DoctorView(
                specialty=profile.specialty,
                timezone=profile.timezone,
                can_prescribe=profile.can_prescribe,
                chat_enabled=settings.chat_enabled if settings is not None else True,
            )
    elif user.role == Role.PATIENT:
        row = (await session.execute(select(Patient.id, Patient.email).where(Patient.user_id == user.id))).first()
        if row is not None:
            patient_id, email = row
    return _user_view(user, doctor, patient_id, email)


def _user_view(user: User, doctor: DoctorView | None, patient_id: int | None, email: str | None = None) -> UserView:
    return UserView(
        id=user.id,
        username=user.username,
        role=user.role,
        display_name=user.display_name,
        active=user.active,
        created_at=user.created_at,
        doctor=doctor,
        patient_id=patient_id,
        email=email,
    )


async def _user(session: AsyncSession, user_id: int, *, lock: bool = False) -> User:
    query = select(User).where(User.id == user_id)
    if lock:
        query = query.with_for_update()
    user = (await session.execute(query)).scalar_one_or_none()
    if user is None:
        raise NotFound(N_("User not found."))
    return user


async def list_users(
    rt: Runtime, *, role: Role | None, active: bool | None, after_id: int | None, limit: int
) -> tuple[list[UserView], int | None]:
    """Users by id, one page (with their doctor profile or patient record, in the same query); the id to continue
    after (None on the last page)."""
    query = (
        select(User, DoctorProfile, DoctorSettings.chat_enabled, Patient.id, Patient.email)
        .outerjoin(DoctorProfile, DoctorProfile.user_id == User.id)
        .outerjoin(DoctorSettings, DoctorSettings.user_id == User.id)
        .outerjoin(Patient, Patient.user_id == User.id)
        .order_by(User.id)
        .limit(limit + 1)
    )
    if role is not None:
        query = query.where(User.role == role.value)
    if active is not None:
        query = query.where(User.active.is_(active))
    if after_id is not None:
        query = query.where(User.id > after_id)
    async with rt.db.read() as session:
        rows = (await session.execute(query)).all()
    views = []
    for user, profile, chat_enabled, patient_id, email in rows[:limit]:
        doctor = None
        if user.role == Role.DOCTOR and profile is not None:
            chat = chat_enabled if chat_enabled is not None else True
            doctor = DoctorView(profile.specialty, profile.timezone, profile.can_prescribe, chat)
        patient = user.role == Role.PATIENT
        views.append(_user_view(user, doctor, patient_id if patient else None, email if patient else None))
    return views, (views[-1].id if len(rows) > limit else None)


async def get_user(rt: Runtime, user_id: int) -> UserView:
    async with rt.db.read() as session:
        return await _view(session, await _user(session, user_id))


def _check_password(password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise ValidationFailed(
            fields={"password": Text("{low} to {high} characters.", low=MIN_PASSWORD, high=MAX_PASSWORD)}
        )


def _check_doctor_fields(*, specialty: str | None, timezone: str | None) -> dict[str, str]:
    fields: dict[str, str] = {}
    check_name(fields, "specialty", specialty, max_chars=64)
    if timezone is not None and not is_timezone(timezone):
        fields["timezone"] = N_("An IANA time zone, e.g. Europe/Berlin.")
    return fields


async def create_user(rt: Runtime, passwords: Passwords, actor: Actor, new: NewUser) -> tuple[UserView, str | None]:
    """Create an account (a doctor gets a profile, a patient a patient record). Returns the user and, when no
    password was given, the generated one: shown this once, stored only as a hash."""
    username = new.username.strip().lower()
    fields: dict[str, str] = {}
    if not USERNAME.fullmatch(username):
        fields["username"] = N_("1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit.")
    check_name(fields, "display_name", new.display_name, max_chars=MAX_NAME)
    doctor_only: dict[str, object] = {"specialty": new.specialty, "timezone": new.timezone}
    doctor_only |= {"can_prescribe": new.can_prescribe, "chat_enabled": new.chat_enabled}
    if new.role is Role.DOCTOR:
        fields |= _check_doctor_fields(specialty=new.specialty, timezone=new.timezone)
    else:
        fields |= {k: N_("Only for doctors.") for k, v in doctor_only.items() if v is not None}
    email = _checked_email(fields, new.email) if new.role is Role.PATIENT else None
    if new.role is not Role.PATIENT and new.email is not None:
        fields["email"] = N_("Only for patients.")
    if new.password is not None and not MIN_PASSWORD <= len(new.password) <= MAX_PASSWORD:
        fields["password"] = Text("{low} to {high} characters.", low=MIN_PASSWORD, high=MAX_PASSWORD)
    if fields:
        raise ValidationFailed(fields=fields)
    generated = secrets.token_urlsafe(GENERATED_PASSWORD_BYTES) if new.password is None else None
    hashed = await asyncio.to_thread(passwords.hash, new.password or generated or "")
    view = await add_user(rt, actor, replace(new, username=username, email=email), password_hash=hashed)
    return view, generated


async def add_user(rt: Runtime, actor: Actor, new: NewUser, *, password_hash: str) -> UserView:
    """The one door through which an account is created, its input already checked by the caller (``create_user``
    for the API and the screens, ``services/admin/command_line.py`` for ``doctordesk create-user``): the user, a
    doctor's profile and settings or a patient's record, in one unit of work audited as ``admin.user-created`` by
    ``actor`` (a system actor: the service). ``new.password`` is ignored: ``password_hash`` is stored."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        if await session.scalar(select(User.id).where(User.username == new.username)) is not None:
            raise ValidationFailed(fields={"username": N_("Already taken.")})
        user = User(
            username=new.username,
            password_hash=password_hash,
            role=new.role.value,
            display_name=new.display_name.strip(),
            active=True,
            created_at=now,
        )
        session.add(user)
        try:
            await session.flush()
        except IntegrityError:
            raise ValidationFailed(fields={"username": N_("Already taken.")}) from None
        if new.role is Role.DOCTOR:
            session.add(
                DoctorProfile(
                    user_id=user.id,
                    specialty=(new.specialty or "General practice").strip(),
                    can_prescribe=True if new.can_prescribe is None else new.can_prescribe,
                    timezone=new.timezone,
                )
            )
            session.add(DoctorSettings(user_id=user.id, chat_enabled=new.chat_enabled is not False))
        elif new.role is Role.PATIENT:
            session.add(Patient(user_id=user.id, name=user.display_name, email=new.email))
        await session.flush()
        view = await _view(session, user)
        record_change(
            session, actor, at=now, action="admin.user-created", entity="user", entity_id=user.id,
            before=None, after=view.audited(),
        )  # fmt: skip
    await clinic_changed(rt)
    return view


async def rename_user(rt: Runtime, actor: Actor, user_id: int, *, display_name: str) -> UserView:
    """Change a user's display name (a patient's record name follows)."""
    problem = name_problem(display_name, max_chars=MAX_NAME)
    if problem is not None:
        raise ValidationFailed(fields={"display_name": problem})
    name = display_name.strip()
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        user = await _user(uow.session, user_id, lock=True)
        before = await _view(uow.session, user)
        user.display_name = name
        if user.role == Role.PATIENT:
            patient = await uow.session.scalar(select(Patient).where(Patient.user_id == user.id))
            if patient is not None:
                patient.name = name
        after = await _view(uow.session, user)
        _changed(uow, actor, now, "admin.user-updated", before, after)
    await clinic_changed(rt)
    return after


def _changed(uow: UnitOfWork, actor: Actor, now: datetime, action: str, before: UserView, after: UserView) -> None:
    record_change(
        uow.session, actor, at=now, action=action, entity="user", entity_id=after.id,
        before=before.audited(), after=after.audited(),
    )  # fmt: skip


async def set_active(rt: Runtime, actor: Actor, user_id: int, *, active: bool) -> UserView:
    """Deactivate (tokens revoked at once, login refused) or reactivate a user. An admin cannot deactivate their
    own account (there would be no one left to undo it)."""
    if not active and user_id == actor.user_id:
        raise ValidationFailed(fields={"active": N_("You cannot deactivate your own account.")})
    now = rt.clock.now()
    ended = None
    async with unit_of_work(rt) as uow:
        user = await _user(uow.session, user_id, lock=True)
        before = await _view(uow.session, user)
        user.active = active
        if not active:
            ended = await recovery.end_every_way_in(uow, user.id, now=now)
        after = await _view(uow.session, user)
        _changed(uow, actor, now, "admin.user-deactivated" if not active else "admin.user-reactivated", before, after)
    if ended is not None:
        recovery.forget(rt, user_id, ended)
    await clinic_changed(rt)
    return after


async def set_password(
    rt: Runtime, passwords: Passwords, actor: Actor, user_id: int, *, password: str | None, keep_factors: bool = False
) -> str | None:
    """Set the given password, or generate one (returned, shown once). Every way into the account ends (sessions,
    apps' grants, push registrations: ``recovery.end_every_way_in``), and its passkeys and authenticator app are
    removed unless ``keep_factors``: whoever took the account over is out, factors they planted included."""
    if password is not None:
        _check_password(password)
    generated = secrets.token_urlsafe(GENERATED_PASSWORD_BYTES) if password is None else None
    async with rt.db.read() as session:
        await _user(session, user_id)  # 404 before the slow hash
    hashed = await asyncio.to_thread(passwords.hash, password or generated or "")
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        user = await _user(uow.session, user_id, lock=True)
        user.password_hash = hashed
        ended = await recovery.end_every_way_in(uow, user.id, now=now)
        if not keep_factors:
            await recovery.remove_factors(uow, user.id)
        action = "admin.password-set" if generated is None else "admin.password-reset"
        after = {"password": "changed", **ended.audited(), "factors_removed": not keep_factors}
        record_change(
            uow.session, actor, at=now, action=action, entity="user", entity_id=user.id, before=None, after=after
        )
    recovery.forget(rt, user_id, ended)
    return generated


def _checked_email(fields: dict[str, str], raw: str | None) -> str | None:
    """A patient's address as stored (None: none); a wrong one goes into ``fields``."""
    try:
        return optional_address(raw)
    except ValueError as exc:
        fields["email"] = str(exc)
        return None


async def update_patient(rt: Runtime, actor: Actor, user_id: int, *, email: str | None) -> UserView:
    """Set a patient's email address, or clear it (None or empty: the patient gets no mail)."""
    fields: dict[str, str] = {}
    address = _checked_email(fields, email)
    if fields:
        raise ValidationFailed(fields=fields)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        user = await _user(session, user_id, lock=True)
        patient = await session.scalar(select(Patient).where(Patient.user_id == user_id))
        if user.role != Role.PATIENT or patient is None:
            raise NotFound(N_("Patient not found."))
        before = await _view(session, user)
        patient.email = address
        await session.flush()
        after = await _view(session, user)
        _changed(uow, actor, now, "admin.patient-updated", before, after)
    return after


async def update_doctor(rt: Runtime, actor: Actor, user_id: int, change: DoctorChange) -> UserView:
    """Edit a doctor's profile: name, specialty, time zone, can-prescribe, chat enabled."""
    fields = _check_doctor_fields(specialty=change.specialty, timezone=change.timezone)
    check_name(fields, "display_name", change.display_name, max_chars=MAX_NAME)
    if fields:
        raise ValidationFailed(fields=fields)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        user = await _user(session, user_id, lock=True)
        profile = await session.get(DoctorProfile, user_id)
        if user.role != Role.DOCTOR or profile is None:
            raise NotFound(N_("Doctor not found."))
        before = await _view(session, user)
        settings = await session.get(DoctorSettings, user_id)
        if settings is None:
            settings = DoctorSettings(user_id=user_id, chat_enabled=True)
            session.add(settings)
        if change.display_name is not None:
            user.display_name = change.display_name.strip()
        if change.specialty is not None:
            profile.specialty = change.specialty.strip()
        if change.timezone is not None:
            profile.timezone = change.timezone
        if change.can_prescribe is not None:
            profile.can_prescribe = change.can_prescribe
        if change.chat_enabled is not None and change.chat_enabled != settings.chat_enabled:
            settings.chat_enabled = change.chat_enabled
            # Open chats of the doctor's appointments show the new state on their next poll or real-time update.
            # Every appointment's, with or without messages yet: a rare change, one small topic each.
            ids = await session.scalars(select(Appointment.id).where(Appointment.doctor_id == user_id))
            topics = tuple(thread_topic(a) for a in ids)
            uow.emit(DomainEvent(kind=EventKind.DOCTOR_CHAT_SETTING, topics=(doctor_topic(user_id), *topics)))
        await session.flush()
        after = await _view(session, user)
        _changed(uow, actor, now, "admin.doctor-updated", before, after)
    await clinic_changed(rt)
    return after
