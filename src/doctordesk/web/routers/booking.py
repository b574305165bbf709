"""The patient's booking screen (docs/booking.md) and the notices of the appointment list."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query

from doctordesk.domain import moments
from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.scheduling.booking import NOTE_MAX
from doctordesk.screens.viewing import Viewing
from doctordesk.services.appointments import notices
from doctordesk.services.appointments.list_screen import ListScreen, list_screen
from doctordesk.services.booking import screen as booking_screen
from doctordesk.web.deps import SCREEN_HEADERS, FormDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.params import DAY_IN_RANGE, STRICT_DATE, STRICT_ID
from doctordesk.web.responses import ID_FIELD, SCREEN_RESPONSES, SUBMIT_RESPONSES, form_body

router = APIRouter(prefix="/profile", tags=["booking"])

SERVICE_FIELD: dict[str, Any] = {"type": "string", "maxLength": 64, "description": "consultation, follow-up, ..."}
START_FIELD: dict[str, Any] = {
    "type": "string",
    "pattern": moments.STAMP_PATTERN,
    "description": "A free time as shown on the screen: UTC, e.g. 20261130T0800Z",
}
CHOOSE_BODY = form_body(
    {
        "doctor": ID_FIELD,
        "location": ID_FIELD,
        "service": SERVICE_FIELD,
    }
)
REQUEST_BODY = form_body(
    {
        "doctor": ID_FIELD,
        "location": ID_FIELD,
        "service": SERVICE_FIELD,
        "start": START_FIELD,
        "note": {"type": "string", "maxLength": NOTE_MAX, "description": "Optional; may span lines"},
    },
    required=("doctor", "location", "service", "start"),
    multiline=("note",),
)

Doctor = Annotated[int | None, Query(ge=1, le=MAX_ID, description="The doctor (user id)"), STRICT_ID]
Location = Annotated[int | None, Query(ge=1, le=MAX_ID, description="The location"), STRICT_ID]
Service = Annotated[str | None, Query(max_length=64, description="The service")]
Week = Annotated[
    date | None, Query(description="A day of the week shown (YYYY-MM-DD)", json_schema_extra=DAY_IN_RANGE), STRICT_DATE
]
Start = Annotated[str | None, Query(pattern=START_FIELD["pattern"], description=START_FIELD["description"])]


def asked(
    doctor: Doctor = None,
    location: Location = None,
    service: Service = None,
    week: Week = None,
    start: Start = None,
) -> booking_screen.Asked:
    """The choice the query spells (strictly parsed; unknown ids are settled by the screen, not refused)."""
    return booking_screen.Asked(doctor, location, service, week, start)


AskedDep = Annotated[booking_screen.Asked, Depends(asked)]


async def _booking(screen: ScreenRequest, choice: booking_screen.Asked) -> Viewing:
    return await screen.viewing(booking_screen.viewing, choice)


@router.put("/book", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def booking_page(screen: ScreenRequestDep, choice: AskedDep) -> dict[str, Any]:
    """The booking screen (patients only; others get 404): doctor, location and service to choose, the week's
    free times, and the picked time to request. The query is the choice; one that no longer fits is settled to the
    nearest that does."""
    return (await (await _booking(screen, choice)).page()).to_json()


@router.patch("/book", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def booking_poll(screen: ScreenRequestDep, choice: AskedDep) -> dict[str, Any]:
    """The booking screen's poll: free times taken or freed meanwhile."""
    return (await (await _booking(screen, choice)).poll(screen.state)).to_json()


@router.patch("/book/choose", responses=SUBMIT_RESPONSES, openapi_extra=CHOOSE_BODY)
async def booking_choose(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Another doctor, location or service chosen: an update set that navigates to the screen for that choice."""
    return (await booking_screen.choose(screen.rt, screen.actor, form)).to_json()


@router.post("/book/request", responses=SUBMIT_RESPONSES, openapi_extra=REQUEST_BODY)
async def booking_request(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Request the picked time (``doctor``, ``location``, ``service``, ``start``, optional ``note``): the same
    rules and codes as the integration API; the doctor's list shows it at once."""
    return (await booking_screen.request(screen.rt, screen.actor, form)).to_json()


@router.post("/notices/{notice_id}/dismiss", responses=SUBMIT_RESPONSES)
async def dismiss_notice(
    screen: ScreenRequestDep, notice_id: Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]
) -> dict[str, Any]:
    """Dismiss one of your notices (another user's is 404): the list's update set."""
    await notices.dismiss(screen.rt, screen.actor, notice_id)
    return (await _list(screen).refresh(screen.state)).to_json()


@router.post("/notices/dismiss", responses=SUBMIT_RESPONSES)
async def dismiss_all_notices(screen: ScreenRequestDep) -> dict[str, Any]:
    """Dismiss all your notices: the list's update set."""
    await notices.dismiss(screen.rt, screen.actor, None)
    return (await _list(screen).refresh(screen.state)).to_json()


def _list(screen: ScreenRequest) -> ListScreen:
    return screen.viewing(list_screen)
