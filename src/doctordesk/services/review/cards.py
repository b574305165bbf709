"""The cards of a Review and Approve form, read and judged: the cards and the page's version from the posted form,
the cards a draft holds, and ``assess_cards``, which the screen (``services.review.screen``) and the decisions
(``services.review.decisions``) both judge cards with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import parse_int, text_problem
from doctordesk.domain.review.assessment import Assessment, assess, entry_timezone_of
from doctordesk.domain.roles import Actor
from doctordesk.domain.scheduling.suggestions import MAX_DURATION, CardInput, parse_cards, windows
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.review.subject import facts_for
from doctordesk.services.scheduling.busy_times import busy_times, lock_schedules
from doctordesk.services.scheduling.clinic_facts import Clinic
from doctordesk.store.review_tables import ReviewDraft
from doctordesk.store.tables import Appointment

CARD_FIELDS = {"profile": "doctor", "location": "location", "date": "date", "time": "time"}
MAX_FIELD_CHARS = 64
# Versions count an appointment's changes from 0; the column is a 32-bit integer on every database.
MAX_VERSION = 2**31 - 1


# --- forms ----------------------------------------------------------------------------------------------------


def cards_from_form(form: Mapping[str, str]) -> tuple[list[CardInput], dict[str, str]]:
    """Cards 1..k from ``profile~n``, ``location~n``, ``date~n``, ``time~n`` (k = the highest n sent; a gap is
    an empty card, reported as missing fields)."""
    found: dict[int, dict[str, str]] = {}
    errors: dict[str, str] = {}
    for key, value in form.items():
        name, sep, suffix = key.partition("~")
        if not sep or name not in CARD_FIELDS:
            continue
        n = parse_int(suffix, maximum=99)
        if n is None:
            errors[key] = N_("Unknown field.")
            continue
        problem = text_problem(value, max_chars=MAX_FIELD_CHARS)
        if problem is not None:
            errors[key] = problem
            value = ""
        found.setdefault(n, {})[CARD_FIELDS[name]] = value
    k = max(found, default=0)
    return [CardInput(**found.get(n, {})) for n in range(1, k + 1)], errors


def version_from(form: Mapping[str, str]) -> int:
    version = parse_int(form.get("version"), minimum=0, maximum=MAX_VERSION)
    if version is None:
        raise ValidationFailed(fields={"version": N_("The page's version is missing: reload the page.")})
    return version


def draft_cards(draft: ReviewDraft | None) -> list[CardInput]:
    if draft is None:
        return []
    return [CardInput(**{k: str(c.get(k, "")) for k in CARD_FIELDS.values()}) for c in draft.cards.get("cards", [])]


def store_cards(draft: ReviewDraft, cards: Sequence[CardInput]) -> None:
    draft.cards = {
        "cards": [{"doctor": c.doctor, "location": c.location, "date": c.date, "time": c.time} for c in cards]
    }


# --- assessing ------------------------------------------------------------------------------------------------


async def assess_cards(
    session: AsyncSession,
    rt: Runtime,
    actor: Actor,
    appointment: Appointment,
    cards: Sequence[CardInput],
    *,
    timezone: str | None,
    acknowledged: bool,
    submitted: bool,
    clinic: Clinic,
    form_errors: Mapping[str, str] | None = None,
    lock: bool = False,
) -> Assessment:
    now = rt.clock.now()
    facts = await facts_for(
        session, actor, appointment, clinic, clinic.directory.locations[appointment.location_id], now
    )
    parsed = parse_cards(
        cards,
        timezone=entry_timezone_of(facts, timezone),
        duration_minutes=appointment.duration_minutes,
        directory=clinic.directory,
        submitted=False,
    )
    if lock:
        await lock_schedules(session, [appointment.doctor_id, *(p.doctor_id for p in parsed.proposals)])
    ranges = windows(parsed.proposals)
    ranges.append(
        (
            appointment.doctor_id,
            appointment.start_at - MAX_DURATION,
            appointment.start_at + timedelta(minutes=appointment.duration_minutes),
        )
    )
    busy = await busy_times(session, appointment.id, ranges, now=now)
    return assess(
        facts,
        cards,
        busy=busy,
        timezone=timezone,
        disclaimer_acknowledged=acknowledged,
        submitted=submitted,
        form_errors=form_errors,
    )
