"""The appointment list screen: PUT gives the page, PATCH is its poll, PATCH .../more shows more of a section; and
the doctor's week view beside it (PUT and its poll)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from doctordesk.domain import moments
from doctordesk.domain.appointments.list_filter import MAX_SEARCH_CHARS, STATUSES, parse_filter
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import TEXT_PATTERN
from doctordesk.domain.moments import form_day
from doctordesk.services.appointments import list_screen as appointment_list
from doctordesk.services.appointments.list_screen import ListScreen
from doctordesk.services.appointments.week_screen import WeekScreen, week_screen
from doctordesk.web.deps import SCREEN_HEADERS, FormDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.responses import SCREEN_RESPONSES, SUBMIT_RESPONSES, form_body

router = APIRouter(prefix="/profile", tags=["appointment list"])

SectionName = Literal["needs-decision", "waiting", "upcoming", "past"]
DAY: dict[str, Any] = {"pattern": moments.OPTIONAL_DAY_PATTERN}  # empty: no bound
# The form's day: a calendar day (not only its digits' shape), or empty for no bound.
FORM_DAY: dict[str, Any] = {
    "anyOf": [{"type": "string", "format": "date", "pattern": moments.DAY_PATTERN}, {"type": "string", "enum": [""]}]
}
# The filter form: what the query says, as a form (empty fields: no filter on them).
FILTER_BODY = form_body(
    {
        "status": {"type": "string", "enum": ["", *STATUSES], "description": "Only appointments in this status"},
        "from": {**FORM_DAY, "description": "First day shown, YYYY-MM-DD (empty: no bound)"},
        "to": {**FORM_DAY, "description": "Last day shown (not before `from`), YYYY-MM-DD (empty: no bound)"},
        "q": {"type": "string", "maxLength": MAX_SEARCH_CHARS, "description": "Patient name"},
    }
)
StatusFilter = Literal["requested", "pending-response", "approved", "declined", "canceled", "completed", "no-show"]


@router.put("/appointments", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def appointment_list_page(
    screen: ScreenRequestDep,
    status: Annotated[StatusFilter | None, Query(description="Only appointments in this status")] = None,
    day_from: Annotated[
        str | None, Query(alias="from", description="First day shown, YYYY-MM-DD", json_schema_extra=DAY)
    ] = None,
    day_to: Annotated[
        str | None,
        Query(alias="to", description="Last day shown (not before `from`), YYYY-MM-DD", json_schema_extra=DAY),
    ] = None,
    q: Annotated[
        str | None,
        Query(
            max_length=MAX_SEARCH_CHARS,
            description="Patient name: each word starts a name word",
            json_schema_extra={"pattern": TEXT_PATTERN},
        ),
    ] = None,
) -> dict[str, Any]:
    """The appointment list screen (page object): every section at its first page, narrowed by the filter in the
    query (the page's state token carries it on to every poll, update and "show more")."""
    values = {"status": status or "", "from": day_from or "", "to": day_to or "", "q": q or ""}
    f, fields = parse_filter(values)
    if fields:
        raise ValidationFailed(fields=fields)
    return (await _list(screen).page(f)).to_json()


@router.patch("/appointments/filter", responses=SUBMIT_RESPONSES, openapi_extra=FILTER_BODY)
async def appointment_list_filter(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Apply the filter form (``status``, ``from``, ``to``, ``q``): an update set that navigates to the list's URL
    with that filter."""
    return appointment_list.apply_filter(screen.rt, form).to_json()


@router.patch("/appointments", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def appointment_list_poll(screen: ScreenRequestDep) -> dict[str, Any]:
    """The list's poll: an update set with what changed since the state token (empty when nothing did)."""
    return (await _list(screen).poll(screen.state)).to_json()


@router.patch("/appointments/more", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def appointment_list_more(
    screen: ScreenRequestDep,
    section: Annotated[SectionName, Query(description="The section to show more of")],
) -> dict[str, Any]:
    """Show more of one section: its next page appended, as an update set to the page named by the state token
    (whose later polls keep showing it)."""
    return (await _list(screen).more(screen.state, section)).to_json()


def _list(screen: ScreenRequest) -> ListScreen:
    return screen.viewing(appointment_list.list_screen)


# --- the week view (docs/week-view.md) -------------------------------------------------------------------------


@router.put("/appointments/week", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def week_view_page(
    screen: ScreenRequestDep,
    day: Annotated[
        str | None,
        Query(
            description="A day of the week shown (a phone shows this day), YYYY-MM-DD; today when absent",
            json_schema_extra=DAY,
        ),
    ] = None,
) -> dict[str, Any]:
    """The doctor's week view (page object): approved appointments, requests awaiting a decision, offers waiting
    for the patient and free times, in the doctor's zone. Doctors only."""
    fields: dict[str, str] = {}
    anchor = form_day(day, "day", fields)
    if fields:
        raise ValidationFailed(fields=fields)
    return (await _week(screen).page(anchor)).to_json()


@router.patch("/appointments/week", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def week_view_poll(screen: ScreenRequestDep) -> dict[str, Any]:
    """The week view's poll: an update set with what changed since the state token (empty when nothing did)."""
    return (await _week(screen).poll(screen.state)).to_json()


def _week(screen: ScreenRequest) -> WeekScreen:
    return screen.viewing(week_screen)
