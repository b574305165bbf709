"""The clinic's settings store (docs/administration.md#clinic-settings): named settings with defaults, read by
the features that use them and changed by admins (the Clinic screen, ``PUT /admin/clinic``), every change audited
with what it was and became.

A setting is a name, a default (possibly from the server's settings) and a check that normalizes a value or
refuses it with words for the form. A feature adds its settings to ``SETTINGS``; no migration is needed (rows
hold text, one per setting that was changed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.config import Settings
from doctordesk.domain import reminders
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.events import clinic_changed
from doctordesk.domain.roles import Actor, require_admin
from doctordesk.domain.texts import N_
from doctordesk.domain.waitlist.rules import Mode, Policy
from doctordesk.runtime import Runtime
from doctordesk.services.audit.changes import record_change
from doctordesk.services.uow import unit_of_work
from doctordesk.store.admin_tables import ClinicSetting

# The settings' names: the stored rows', the form fields' and the JSON API's alike.
REMINDERS_ENABLED = "reminders_enabled"
REMINDER_HOURS = "reminder_hours"
QUIET_BEGIN = "quiet_begin"
QUIET_END = "quiet_end"
DEFAULT_QUIET = ("21:00", "08:00")
WAITLIST_MODE = "waitlist_mode"
WAITLIST_OFFER_MINUTES = "waitlist_offer_minutes"
WAITLIST_DIRECT_MOVE = "waitlist_direct_move"
FLAG_PROBLEM = N_("true or false.")
MODE_PROBLEM = N_("one-at-a-time or all-at-once.")
MINUTES_PROBLEM = N_("Whole minutes from 1 to 1440.")


def _flag(raw: str) -> str:
    if raw not in ("true", "false"):
        raise ValueError(FLAG_PROBLEM)
    return raw


def _hours(raw: str) -> str:
    return reminders.format_hours(reminders.parse_hours(raw))


def _mode(raw: str) -> str:
    if raw not in {m.value for m in Mode}:
        raise ValueError(MODE_PROBLEM)
    return raw


def _minutes(raw: str) -> str:
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= 1440:
        raise ValueError(MINUTES_PROBLEM)
    return str(int(raw))


def _clock_time(raw: str) -> str:
    return reminders.parse_clock_time(raw).strftime("%H:%M") if raw.strip() else ""


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    default: Callable[[Settings], str]
    check: Callable[[str], str]  # the value normalized; ValueError(words) when refused


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting(REMINDERS_ENABLED, lambda _s: "true", _flag),
        Setting(REMINDER_HOURS, lambda s: s.reminder_hours, _hours),
        Setting(QUIET_BEGIN, lambda _s: DEFAULT_QUIET[0], _clock_time),
        Setting(QUIET_END, lambda _s: DEFAULT_QUIET[1], _clock_time),
        # The waitlist's policy (docs/waitlist.md): the deployment's DOCTORDESK_WAITLIST_* until an admin sets it.
        Setting(WAITLIST_MODE, lambda s: s.waitlist_mode, _mode),
        Setting(WAITLIST_OFFER_MINUTES, lambda s: str(s.waitlist_offer_minutes), _minutes),
        Setting(WAITLIST_DIRECT_MOVE, lambda s: "true" if s.waitlist_direct_move else "false", _flag),
    )
}


async def values(session: AsyncSession, settings: Settings) -> dict[str, str]:
    """Every setting's current value (its default where no admin changed it)."""
    stored = dict((await session.execute(select(ClinicSetting.name, ClinicSetting.value))).all())
    return {name: stored.get(name, s.default(settings)) for name, s in SETTINGS.items()}


async def read(rt: Runtime) -> dict[str, str]:
    async with rt.db.read() as session:
        return await values(session, rt.settings)


def reminder_rules(current: Mapping[str, str]) -> reminders.ReminderRules:
    """The reminder rules the settings say."""
    begin, end = current[QUIET_BEGIN], current[QUIET_END]
    quiet = (
        reminders.Quiet(reminders.parse_clock_time(begin), reminders.parse_clock_time(end))
        if begin and end and begin != end
        else None
    )
    return reminders.ReminderRules(
        enabled=current[REMINDERS_ENABLED] == "true", hours=reminders.parse_hours(current[REMINDER_HOURS]), quiet=quiet
    )


def waitlist_policy(current: Mapping[str, str]) -> Policy:
    """The waitlist's policy the settings say."""
    return Policy(
        mode=Mode(current[WAITLIST_MODE]),
        offer_minutes=int(current[WAITLIST_OFFER_MINUTES]),
        direct_move=current[WAITLIST_DIRECT_MOVE] == "true",
    )


def checked(changes: Mapping[str, str], current: Mapping[str, str]) -> dict[str, str]:
    """``changes`` normalized, with the problems of every refused field at once (ValidationFailed, keyed by the
    setting's name); quiet hours are both set or both empty."""
    fields: dict[str, str] = {}
    clean: dict[str, str] = {}
    for name, raw in changes.items():
        setting = SETTINGS.get(name)
        if setting is None:
            fields[name] = N_("Unknown setting.")
            continue
        try:
            clean[name] = setting.check(raw)
        except ValueError as exc:
            fields[name] = str(exc)
    merged = {**current, **clean}
    if not fields and bool(merged[QUIET_BEGIN]) != bool(merged[QUIET_END]):
        fields[QUIET_END if merged[QUIET_BEGIN] else QUIET_BEGIN] = reminders.QUIET_PROBLEM
    if fields:
        raise ValidationFailed(fields=fields)
    return clean


async def update(rt: Runtime, actor: Actor, changes: Mapping[str, str]) -> dict[str, str]:
    """Change some settings (the others keep theirs), audited as one change; every value after it."""
    require_admin(actor, hidden=True)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        before = await values(session, rt.settings)
        clean = checked(changes, before)
        changed = {k: v for k, v in clean.items() if before[k] != v}
        for name, value in changed.items():
            await _store(session, name, value, now=now, by=actor.user_id)
        after = {**before, **changed}
        if changed:
            record_change(
                session, actor, at=now, action="admin.clinic-settings-changed", entity="clinic", entity_id=None,
                before={k: before[k] for k in changed}, after=changed,
            )  # fmt: skip
            uow.emit(clinic_changed())
    return after


async def _store(session: AsyncSession, name: str, value: str, *, now: datetime, by: int) -> None:
    row = await session.get(ClinicSetting, name, with_for_update=True)
    if row is None:
        session.add(ClinicSetting(name=name, value=value, updated_at=now, updated_by=by))
    else:
        row.value, row.updated_at, row.updated_by = value, now, by
