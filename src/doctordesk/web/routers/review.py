"""Review and Approve: the page (PUT), its poll and editing actions (PATCH), the decision (POST approve) and the
decline (POST decline). Fields and endpoints: docs/review-and-approve.md."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.scheduling.suggestions import TIMEZONES
from doctordesk.screens.viewing import Viewing
from doctordesk.services.review import decisions_screen, offers_screen
from doctordesk.services.review import screen as review_screen
from doctordesk.web.deps import SCREEN_HEADERS, ActorDep, FormDep, RuntimeDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.params import STRICT_ID, strict_int
from doctordesk.web.responses import (
    FLAG_FIELD,
    SUBMIT_RESPONSES,
    VERSION_FIELD,
    card_fields,
    form_body,
)
from doctordesk.web.screen_routes import Route, screen_routes

router = APIRouter(prefix="/profile/appointments", tags=["review and approve"])

AppointmentId = Annotated[int, Path(ge=1, le=MAX_ID, description="The appointment"), STRICT_ID]
BASE = "/{appointment_id}/approve"

TIMEZONE_FIELD: dict[str, Any] = {
    "type": "string",
    "enum": list(TIMEZONES),
    "description": "An IANA zone, e.g. Europe/Berlin",
}
REASON_FIELD: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 1000, "description": "May span lines"}
CHANGE_BODY = form_body(card_fields(as_typed=True))
TIMEZONE_BODY = form_body({"timezone": TIMEZONE_FIELD}, required=("timezone",))
DISCLAIMER_BODY = form_body({"disclaimer-displayed": FLAG_FIELD})
APPROVE_BODY = form_body(
    {"version": VERSION_FIELD, "disclaimer-displayed": FLAG_FIELD, "timezone": TIMEZONE_FIELD, **card_fields()},
    required=("version",),
)
DECLINE_BODY = form_body(
    {"reason": REASON_FIELD, "version": VERSION_FIELD}, required=("reason", "version"), multiline=("reason",)
)
ACCEPT_BODY = form_body({"version": VERSION_FIELD, "coverage-acknowledged": FLAG_FIELD}, required=("version",))
REJECT_BODY = form_body({"version": VERSION_FIELD}, required=("version",))
# The patient's reason for canceling may be left empty.
CANCEL_REASON_FIELD: dict[str, Any] = {"type": "string", "maxLength": 1000, "description": "Optional; may span lines"}
CANCEL_BODY = form_body(
    {"reason": CANCEL_REASON_FIELD, "version": VERSION_FIELD}, required=("version",), multiline=("reason",)
)


def _review(screen: ScreenRequest, appointment_id: int) -> Viewing:
    return screen.viewing(review_screen.viewing, appointment_id)


screen_routes(
    router,
    BASE,
    _review,
    page=Route(
        "review_page",
        "The Review and Approve page (only the appointment's doctor or an admin; others get 404).",
    ),
    poll=Route("review_poll", "The page's poll: what changed since the state token (empty when nothing did)."),
    params={"appointment_id": AppointmentId},
)


@router.patch(BASE + "/add-alternative", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def add_alternative(screen: ScreenRequestDep, appointment_id: AppointmentId) -> dict[str, Any]:
    """Add a Suggested Scheduling card (doctor and location prefilled from the request); a fourth is refused."""
    rt, actor, layout, state = screen.rt, screen.actor, screen.layout, screen.state
    return (await review_screen.add_alternative(rt, actor, appointment_id, layout=layout, state=state)).to_json()


@router.patch(BASE + "/change", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **CHANGE_BODY})
async def change_fields(screen: ScreenRequestDep, appointment_id: AppointmentId, form: FormDep) -> dict[str, Any]:
    """Store a card's fields as typed (``profile~n``, ``location~n``, ``date~n``, ``time~n``): the card comes back
    with changed fields highlighted, validation messages, and its fees once complete."""
    rt, actor, layout, state = screen.rt, screen.actor, screen.layout, screen.state
    return (await review_screen.change_fields(rt, actor, appointment_id, form, layout=layout, state=state)).to_json()


@router.patch(BASE + "/delete-alternative/{n}", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def delete_alternative(
    screen: ScreenRequestDep,
    appointment_id: AppointmentId,
    n: Annotated[int, Path(ge=1, le=99), strict_int(maximum=99)],
) -> dict[str, Any]:
    """Delete card ``n`` (refused for the only card)."""
    rt, actor, layout, state = screen.rt, screen.actor, screen.layout, screen.state
    return (await review_screen.delete_alternative(rt, actor, appointment_id, n, layout=layout, state=state)).to_json()


@router.patch(BASE + "/timezone", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **TIMEZONE_BODY})
async def confirm_timezone(screen: ScreenRequestDep, appointment_id: AppointmentId, form: FormDep) -> dict[str, Any]:
    """Confirm the timezone (field ``timezone``, an IANA name) when the doctor's profile has none."""
    rt, actor, layout, state = screen.rt, screen.actor, screen.layout, screen.state
    tz = form.get("timezone", "")
    return (await review_screen.confirm_timezone(rt, actor, appointment_id, tz, layout=layout, state=state)).to_json()


@router.patch(BASE + "/disclaimer", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **DISCLAIMER_BODY})
async def acknowledge_disclaimer(
    screen: ScreenRequestDep, appointment_id: AppointmentId, form: FormDep
) -> dict[str, Any]:
    """Record the disclaimer acknowledgement (field ``disclaimer-displayed``: true or false)."""
    rt, actor, layout, state = screen.rt, screen.actor, screen.layout, screen.state
    value = form.get("disclaimer-displayed")
    return (
        await review_screen.acknowledge_disclaimer(rt, actor, appointment_id, value, layout=layout, state=state)
    ).to_json()


@router.patch(BASE + "/decline-dialog", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def open_decline_dialog(screen: ScreenRequestDep, appointment_id: AppointmentId) -> dict[str, Any]:
    """Open the decline dialog (a Modal with the required ``reason``)."""
    rt, actor, layout, state = screen.rt, screen.actor, screen.layout, screen.state
    return (
        await review_screen.decline_dialog(rt, actor, appointment_id, open=True, layout=layout, state=state)
    ).to_json()


@router.patch(BASE + "/decline-dialog/close", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def close_decline_dialog(screen: ScreenRequestDep, appointment_id: AppointmentId) -> dict[str, Any]:
    """Close the decline dialog without declining."""
    rt, actor, layout, state = screen.rt, screen.actor, screen.layout, screen.state
    return (
        await review_screen.decline_dialog(rt, actor, appointment_id, open=False, layout=layout, state=state)
    ).to_json()


@router.patch(BASE + "/discard", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def discard_draft(screen: ScreenRequestDep, appointment_id: AppointmentId) -> dict[str, Any]:
    """Discard the unsent changes (the draft, on every device) and stay on the screen."""
    rt, actor, layout, state = screen.rt, screen.actor, screen.layout, screen.state
    return (await review_screen.discard(rt, actor, appointment_id, layout=layout, state=state)).to_json()


@router.patch(BASE + "/cancel", responses=SUBMIT_RESPONSES)
async def cancel(rt: RuntimeDep, actor: ActorDep, appointment_id: AppointmentId) -> dict[str, Any]:
    """Discard the changes and leave the screen (navigate to the list)."""
    return (await review_screen.cancel(rt, actor, appointment_id)).to_json()


@router.post(BASE, responses=SUBMIT_RESPONSES, openapi_extra=APPROVE_BODY)
async def approve(rt: RuntimeDep, actor: ActorDep, appointment_id: AppointmentId, form: FormDep) -> dict[str, Any]:
    """Submit the decision: ``version``, ``disclaimer-displayed``, and per alternative n = 1..3 ``profile~n``,
    ``location~n``, ``date~n``, ``time~n`` (none: approve the requested time); ``timezone`` when the profile
    has none. Success closes the screen (``navigate`` to the list)."""
    return (await decisions_screen.approve(rt, actor, appointment_id, form)).to_json()


@router.post("/{appointment_id}/decline", responses=SUBMIT_RESPONSES, openapi_extra=DECLINE_BODY)
async def decline(rt: RuntimeDep, actor: ActorDep, appointment_id: AppointmentId, form: FormDep) -> dict[str, Any]:
    """Decline the request: ``reason`` (required) and ``version``."""
    return (await decisions_screen.decline(rt, actor, appointment_id, form)).to_json()


# --- the patient's side ---------------------------------------------------------------------------------------


def _offers(screen: ScreenRequest, appointment_id: int) -> Viewing:
    return screen.viewing(offers_screen.viewing, appointment_id)


screen_routes(
    router,
    "/{appointment_id}/offers",
    _offers,
    page=Route(
        "offers_page",
        (
            "The offers sent for an appointment: its patient accepts one or rejects all; its doctor, support and "
            "admins\nsee them read-only."
        ),
    ),
    poll=Route("offers_poll", "The offers screen's poll."),
    params={"appointment_id": AppointmentId},
)


def _cancel_confirmation(screen: ScreenRequest, appointment_id: int) -> Viewing:
    return screen.viewing(offers_screen.viewing, appointment_id, confirming=True)


screen_routes(
    router,
    "/{appointment_id}/offers/cancel",
    _cancel_confirmation,
    page=Route(
        "cancel_confirmation_page",
        "The patient's appointment with the confirmation of a cancel open (it names the appointment).",
    ),
    poll=Route("cancel_confirmation_poll", "The cancel confirmation's poll."),
    params={"appointment_id": AppointmentId},
)


@router.post("/{appointment_id}/offers/cancel", responses=SUBMIT_RESPONSES, openapi_extra=CANCEL_BODY)
async def cancel_appointment(
    rt: RuntimeDep, actor: ActorDep, appointment_id: AppointmentId, form: FormDep
) -> dict[str, Any]:
    """The patient cancels their own appointment (``version``, ``reason`` optional) while it is requested, waiting
    for their answer or approved, up to the clinic's deadline (``DOCTORDESK_PATIENT_CANCEL_HOURS`` before the
    start; later: 409 ``INVALID_TRANSITION``). Open offers are withdrawn. Only the patient; others get 404."""
    return (await offers_screen.cancel(rt, actor, appointment_id, form)).to_json()


@router.post("/{appointment_id}/offers/{offer_id}/accept", responses=SUBMIT_RESPONSES, openapi_extra=ACCEPT_BODY)
async def accept_offer(
    rt: RuntimeDep,
    actor: ActorDep,
    appointment_id: AppointmentId,
    offer_id: Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID],
    form: FormDep,
) -> dict[str, Any]:
    """Accept one offer (``version``; ``coverage-acknowledged`` when it carries a coverage warning): the
    appointment is approved at that time and the other offers are withdrawn. Only the patient; others get 404."""
    return (await offers_screen.accept(rt, actor, appointment_id, offer_id, form)).to_json()


@router.post("/{appointment_id}/offers/reject", responses=SUBMIT_RESPONSES, openapi_extra=REJECT_BODY)
async def reject_offers(
    rt: RuntimeDep, actor: ActorDep, appointment_id: AppointmentId, form: FormDep
) -> dict[str, Any]:
    """Reject every offer (``version``): the request is canceled. Only the patient; others get 404."""
    return (await offers_screen.reject_all(rt, actor, appointment_id, form)).to_json()
