"""The appointment list screen: PUT gives the page, PATCH is its poll."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from doctordesk.screens.viewing import Viewing
from doctordesk.services.appointments import list_viewing
from doctordesk.web.deps import SCREEN_HEADERS, ScreenRequest, ScreenRequestDep
from doctordesk.web.responses import SCREEN_RESPONSES

router = APIRouter(prefix="/profile", tags=["appointment list"])


@router.put("/appointments", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def appointment_list_page(screen: ScreenRequestDep) -> dict[str, Any]:
    """The appointment list screen (page object)."""
    return (await _list(screen).page()).to_json()


@router.patch("/appointments", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def appointment_list_poll(screen: ScreenRequestDep) -> dict[str, Any]:
    """The list's poll: an update set with what changed since the state token (empty when nothing did)."""
    return (await _list(screen).poll(screen.state)).to_json()


def _list(screen: ScreenRequest) -> Viewing:
    return list_viewing(screen.rt, screen.actor, layout=screen.layout, client_id=screen.client_id)
