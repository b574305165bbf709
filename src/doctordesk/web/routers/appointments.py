"""The appointment list screen: PUT gives the page, PATCH is its poll, PATCH .../more shows more of a section."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from doctordesk.services import appointment_list
from doctordesk.services.show_more import PagedScreen
from doctordesk.web.deps import SCREEN_HEADERS, ScreenRequest, ScreenRequestDep
from doctordesk.web.responses import SCREEN_RESPONSES

router = APIRouter(prefix="/profile", tags=["appointment list"])

SectionName = Literal["needs-decision", "waiting", "upcoming", "past"]


@router.put("/appointments", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def appointment_list_page(screen: ScreenRequestDep) -> dict[str, Any]:
    """The appointment list screen (page object): every section at its first page."""
    return (await _list(screen).page()).to_json()


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


def _list(screen: ScreenRequest) -> PagedScreen:
    return appointment_list.list_screen(screen.rt, screen.actor, layout=screen.layout, client_id=screen.client_id)
