"""The patient's waitlist (docs/waitlist.md): its screen, joining, leaving and answering the times offered."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.waitlist.rules import DAY_KEYS
from doctordesk.screens.viewing import Viewing
from doctordesk.services.waitlist import screen as waitlist_screen
from doctordesk.web.deps import FormDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import ID_FIELD, SUBMIT_RESPONSES, form_body
from doctordesk.web.screen_routes import Route, screen_routes

router = APIRouter(prefix="/profile", tags=["waitlist"])

TIME_FIELD: dict[str, Any] = {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$", "description": "HH:MM"}
JOIN_BODY = form_body(
    {
        "doctor": {"type": "string", "maxLength": 20, "description": "A doctor's id, or 'any' (or empty): any doctor"},
        "location": ID_FIELD,
        "service": {"type": "string", "maxLength": 64, "description": "consultation, follow-up, teledermatology"},
        "until": {"type": "string", "format": "date", "description": "The last day to be offered a time (YYYY-MM-DD)"},
        "from": {**TIME_FIELD, "description": "Earliest start of day (HH:MM, the location's time; default 00:00)"},
        "to": {**TIME_FIELD, "description": "Latest end of day (HH:MM, the location's time; default 23:59)"},
        "appointment": {**ID_FIELD, "description": "Optional: the appointment held, to be offered an earlier time"},
        **{f"days-{key}": {"type": "string", "enum": ["true", "false"]} for key in DAY_KEYS},
    },
    required=("location", "service", "until"),
)

Doctor = Annotated[int | None, Query(ge=1, le=MAX_ID, description="Start the form with this doctor"), STRICT_ID]
Location = Annotated[int | None, Query(ge=1, le=MAX_ID, description="Start the form with this location"), STRICT_ID]
Service = Annotated[str | None, Query(max_length=64, description="Start the form with this service")]
EntryId = Annotated[int, Path(ge=1, le=MAX_ID, description="The waitlist entry"), STRICT_ID]
OfferId = Annotated[int, Path(ge=1, le=MAX_ID, description="The offer"), STRICT_ID]


def _screen(
    screen: ScreenRequest, doctor: int | None = None, location: int | None = None, service: str | None = None
) -> Viewing:
    picked = {k: str(v) for k, v in (("doctor", doctor), ("location", location), ("service", service)) if v}
    return screen.viewing(waitlist_screen.viewing, picked=picked)


screen_routes(
    router,
    "/waitlist",
    _screen,
    page=Route(
        "waitlist_page",
        "The patient's waitlist: times offered to them, what they wait for, and joining "
        "(patients only; others get 404). The query starts the form with a choice.",
    ),
    poll=Route("waitlist_poll", "The waitlist screen's poll: offers made, taken by others or lapsed."),
    params={"doctor": (Doctor, None), "location": (Location, None), "service": (Service, None)},
)


@router.post("/waitlist", responses=SUBMIT_RESPONSES, openapi_extra=JOIN_BODY)
async def waitlist_join(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Join the waitlist: ``doctor`` (or any), ``location``, ``service``, ``until`` (YYYY-MM-DD), optional weekdays
    (``days-mon`` … ``days-sun``), times of day (``from``, ``to``) and the ``appointment`` held. The screen's
    update set; FIELDS_VALIDATION_ERROR naming the fields that are wrong, nothing written."""
    return await screen.submit(waitlist_screen.join, form, page=_screen(screen))


@router.post("/waitlist/{entry_id}/leave", responses=SUBMIT_RESPONSES)
async def waitlist_leave(screen: ScreenRequestDep, entry_id: EntryId) -> dict[str, Any]:
    """Leave the waitlist for one entry (another patient's is 404); its open offer goes to the next."""
    return await screen.submit(waitlist_screen.leave, entry_id, page=_screen(screen))


@router.post("/waitlist/offers/{offer_id}/accept", responses=SUBMIT_RESPONSES)
async def waitlist_accept(screen: ScreenRequestDep, offer_id: OfferId) -> dict[str, Any]:
    """Accept an offered time: a request for the doctor (or the held appointment moved, where the clinic allows
    it); the update set navigates to the list. APPOINTMENT_CHANGED when another patient took it first."""
    return (await waitlist_screen.accept(screen.rt, screen.actor, offer_id)).to_json()


@router.post("/waitlist/offers/{offer_id}/decline", responses=SUBMIT_RESPONSES)
async def waitlist_decline(screen: ScreenRequestDep, offer_id: OfferId) -> dict[str, Any]:
    """Decline an offered time: it goes to the next patient; the patient stays on the waitlist."""
    return await screen.submit(waitlist_screen.decline, offer_id, page=_screen(screen))
