"""The Review and Approve screen's use cases: one function per user action, each one transaction.

Screen actions (open, poll, add/change/delete a card, confirm the timezone, acknowledge the disclaimer, open or
close the decline dialog, cancel) edit the user's server-side draft and answer with the page's update set. The
decisions themselves (approve, suggest, decline) are ``services.review.decisions``; both judge cards with
``services.review.cards.assess_cards``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from sqlalchemy import delete

from doctordesk.domain.appointments.decisions import can_decide, parse_flag, why_not
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import InvalidTransition, ValidationFailed
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.review.timing import review_edge
from doctordesk.domain.roles import Actor
from doctordesk.domain.scheduling.suggestions import (
    MAX_ALTERNATIVES,
    CardInput,
    is_timezone,
)
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n import _
from doctordesk.runtime import Runtime
from doctordesk.screens import review_approve
from doctordesk.screens.protocol import Page, UpdateSet
from doctordesk.screens.state import Viewer, current_client, lasting
from doctordesk.screens.viewing import Viewing
from doctordesk.services.audit.entries import audit
from doctordesk.services.review.cards import CARD_FIELDS, assess_cards, cards_from_form, draft_cards, store_cards
from doctordesk.services.review.subject import appointment_for, subject_for, view_of
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.scheduling.options_screen import doctor_options, location_options
from doctordesk.services.uow import unit_of_work
from doctordesk.services.waitlist import origin as waitlist_origin
from doctordesk.store.review_tables import ReviewDraft

# --- the screen -----------------------------------------------------------------------------------------------


async def _render(rt: Runtime, actor: Actor, appointment_id: int, layout: Any) -> Page:
    async with rt.db.read() as session:
        subject = await subject_for(session, actor, appointment_id)
        a, draft = subject.appointment, subject.draft
        c = await cached_clinic(rt, session)
        view = view_of(subject, c)
        assessment = await assess_cards(
            session,
            rt,
            actor,
            a,
            draft_cards(draft),
            timezone=draft.timezone if draft else None,
            acknowledged=bool(draft and draft.disclaimer_acknowledged_at),
            submitted=False,
            clinic=c,
        )
        from_waitlist = await waitlist_origin.from_waitlist(session, a.id)
    page = review_approve.render(
        review_approve.ReviewScreen(
            view=view,
            assessment=assessment,
            doctors=doctor_options(c),
            locations=location_options(c),
            decline_open=bool(draft and draft.decline_open),
            layout=layout,
            timeout=rt.settings.poll_review_seconds,
            draft_saved=draft.updated_at if draft is not None and _restored(draft) else None,
            from_waitlist=from_waitlist,
        )
    )
    return lasting(page, review_edge(assessment))


def _restored(draft: ReviewDraft) -> bool:
    """Whether the viewer finds changes kept from before: the draft holds some, and they were not made by this
    very client (tab) — the changes a doctor is making right now are not "restored". A
    client without an id (an SDK) always hears of them."""
    writer = draft.cards.get("client")
    return _holds_changes(draft) and not (writer is not None and writer == current_client.get())


def _holds_changes(draft: ReviewDraft) -> bool:
    """Whether a draft keeps anything the doctor would lose by discarding it (an open dialog alone is not)."""
    return bool(draft_cards(draft) or draft.disclaimer_acknowledged_at or draft.timezone)


def viewing(rt: Runtime, actor: Actor, appointment_id: int, *, layout: Any, client_id: str | None = None) -> Viewing:
    """The Review and Approve screen of one appointment, as ``actor`` sees it: ``page()`` for the PUT, ``poll()``
    for the PATCH (only the appointment's doctor or an admin; others get 404)."""
    render = partial(_render, rt, actor, appointment_id, layout)
    shown = review_approve.shown(appointment_id, actor.user_id)
    return Viewing(rt.screens, rt.wall(), Viewer.of(actor, client_id), shown, rt.settings.poll_review_seconds, render)


async def _refresh(rt: Runtime, actor: Actor, appointment_id: int, layout: Any, state: str | None) -> UpdateSet:
    """The update set after an action: the page rendered now, diffed against the client's page."""
    return await viewing(rt, actor, appointment_id, layout=layout).refresh(state)


DraftChange = Callable[[ReviewDraft, list[CardInput]], list[CardInput] | None]


async def _edit(
    rt: Runtime,
    actor: Actor,
    appointment_id: int,
    change: DraftChange,
    *,
    layout: Any,
    state: str | None,
    audit_action: str | None = None,
) -> UpdateSet:
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        subject = await subject_for(uow.session, actor, appointment_id, lock=True)
        a, draft = subject.appointment, subject.draft
        if not can_decide(Status(a.status)):
            raise InvalidTransition(why_not(Status(a.status)))
        if draft is None:
            draft = ReviewDraft(appointment_id=a.id, user_id=actor.user_id, cards={"cards": []}, updated_at=now)
            uow.session.add(draft)
        cards = change(draft, draft_cards(draft))
        if cards is not None:
            store_cards(draft, cards)
        # Which client (tab) changed it last: its own page does not call these changes "restored".
        draft.cards = {**draft.cards, "client": current_client.get()}
        draft.updated_at = now
        if audit_action:
            audit(
                uow.session,
                at=now,
                actor_id=actor.user_id,
                action=audit_action,
                entity="appointment",
                entity_id=a.id,
                details={"version": a.version},
            )
        uow.emit(DomainEvent(EventKind.REVIEW_DRAFT_CHANGED, topics=(review_approve.draft_topic(a.id, actor.user_id),)))
    return await _refresh(rt, actor, appointment_id, layout, state)


async def add_alternative(
    rt: Runtime, actor: Actor, appointment_id: int, *, layout: Any, state: str | None
) -> UpdateSet:
    """Add a card with doctor and location prefilled from the request; a fourth is refused."""
    prefill: dict[str, str] = {}

    def change(_draft: ReviewDraft, cards: list[CardInput]) -> list[CardInput]:
        if len(cards) >= MAX_ALTERNATIVES:
            raise ValidationFailed(
                Text("At most {count} alternatives.", count=MAX_ALTERNATIVES),
                fields={"another-alternative": Text("At most {count} alternatives.", count=MAX_ALTERNATIVES)},
            )
        return [*cards, CardInput(doctor=prefill["doctor"], location=prefill["location"])]

    async with rt.db.read() as session:
        a = await appointment_for(session, actor, appointment_id)
        prefill.update(doctor=str(a.doctor_id), location=str(a.location_id))
    return await _edit(rt, actor, appointment_id, change, layout=layout, state=state)


async def change_fields(
    rt: Runtime, actor: Actor, appointment_id: int, form: Mapping[str, str], *, layout: Any, state: str | None
) -> UpdateSet:
    """Store the fields of one or more cards as typed (``profile~n``, ``location~n``, ``date~n``, ``time~n``)."""
    sent, errors = cards_from_form(form)
    if errors:
        raise ValidationFailed(fields=errors)
    present = {n for n in range(1, len(sent) + 1) if any(f"{k}~{n}" in form for k in CARD_FIELDS)}
    if not present:
        raise ValidationFailed(N_("No card fields were sent."))

    def change(_draft: ReviewDraft, cards: list[CardInput]) -> list[CardInput]:
        for n in present:
            if n > len(cards):
                raise ValidationFailed(fields={f"date~{n}": N_("There is no such alternative.")})
            old = cards[n - 1]
            cards[n - 1] = CardInput(
                doctor=form.get(f"profile~{n}", old.doctor),
                location=form.get(f"location~{n}", old.location),
                date=form.get(f"date~{n}", old.date),
                time=form.get(f"time~{n}", old.time),
            )
        return cards

    return await _edit(rt, actor, appointment_id, change, layout=layout, state=state)


async def delete_alternative(
    rt: Runtime, actor: Actor, appointment_id: int, card_number: int, *, layout: Any, state: str | None
) -> UpdateSet:
    """Remove card ``card_number`` (the later cards move up); the only card cannot be deleted."""

    def change(_draft: ReviewDraft, cards: list[CardInput]) -> list[CardInput]:
        if not 1 <= card_number <= len(cards):
            raise ValidationFailed(fields={f"delete~{card_number}": N_("There is no such alternative.")})
        if len(cards) == 1:
            raise ValidationFailed(fields={f"delete~{card_number}": N_("The only alternative cannot be deleted.")})
        return cards[: card_number - 1] + cards[card_number:]

    return await _edit(rt, actor, appointment_id, change, layout=layout, state=state)


async def confirm_timezone(
    rt: Runtime, actor: Actor, appointment_id: int, timezone: str, *, layout: Any, state: str | None
) -> UpdateSet:
    """Record the timezone the doctor enters times in (asked when their profile has none)."""
    timezone = timezone.strip()
    if not is_timezone(timezone):
        raise ValidationFailed(fields={"timezone": N_("Choose a timezone from the list.")})

    def change(draft: ReviewDraft, _cards: list[CardInput]) -> None:
        draft.timezone = timezone

    return await _edit(
        rt, actor, appointment_id, change, layout=layout, state=state, audit_action="review.timezone-confirmed"
    )


async def acknowledge_disclaimer(
    rt: Runtime, actor: Actor, appointment_id: int, value: str | None, *, layout: Any, state: str | None
) -> UpdateSet:
    """Record (or withdraw) the acknowledgement that the disclaimer was displayed."""
    now = rt.clock.now()
    acknowledged = parse_flag(value, field="disclaimer-displayed")

    def change(draft: ReviewDraft, _cards: list[CardInput]) -> None:
        draft.disclaimer_acknowledged_at = now if acknowledged else None

    action = "review.disclaimer-acknowledged" if acknowledged else "review.disclaimer-unacknowledged"
    return await _edit(rt, actor, appointment_id, change, layout=layout, state=state, audit_action=action)


async def decline_dialog(
    rt: Runtime, actor: Actor, appointment_id: int, *, open: bool, layout: Any, state: str | None
) -> UpdateSet:
    """Open or close the decline dialog."""

    def change(draft: ReviewDraft, _cards: list[CardInput]) -> None:
        draft.decline_open = open

    return await _edit(rt, actor, appointment_id, change, layout=layout, state=state)


async def discard(rt: Runtime, actor: Actor, appointment_id: int, *, layout: Any, state: str | None) -> UpdateSet:
    """Discard the draft and stay: the screen as the request stands, on every device of the doctor."""
    async with unit_of_work(rt) as uow:
        a = await appointment_for(uow.session, actor, appointment_id, lock=True)
        await uow.session.execute(
            delete(ReviewDraft).where(ReviewDraft.appointment_id == a.id, ReviewDraft.user_id == actor.user_id)
        )
        uow.emit(DomainEvent(EventKind.REVIEW_DRAFT_CHANGED, topics=(review_approve.draft_topic(a.id, actor.user_id),)))
    update = await _refresh(rt, actor, appointment_id, layout, state)
    update.notice = {"level": "info", "text": _("Changes discarded.")}
    return update


async def cancel(rt: Runtime, actor: Actor, appointment_id: int) -> UpdateSet:
    """Discard the draft and leave the screen."""
    async with unit_of_work(rt) as uow:
        a = await appointment_for(uow.session, actor, appointment_id, lock=True)
        await uow.session.execute(
            delete(ReviewDraft).where(ReviewDraft.appointment_id == a.id, ReviewDraft.user_id == actor.user_id)
        )
        uow.emit(DomainEvent(EventKind.REVIEW_DRAFT_CHANGED, topics=(review_approve.draft_topic(a.id, actor.user_id),)))
    return UpdateSet(
        screen=review_approve.SCREEN,
        state="",
        timeout=rt.settings.poll_list_seconds,
        navigate=review_approve.LIST_ENDPOINT,
        notice={"level": "info", "text": _("Changes discarded.")},
    )
