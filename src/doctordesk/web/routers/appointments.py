"""The appointment list screen: PUT gives the page, PATCH is its poll."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from doctordesk.domain.roles import Actor
from doctordesk.runtime import Runtime
from doctordesk.screens import appointment_list
from doctordesk.screens.protocol import Layout, Page, UpdateSet
from doctordesk.screens.state import Viewer
from doctordesk.services.appointments import list_appointments
from doctordesk.web.deps import SCREEN_HEADERS, ScreenRequestDep
from doctordesk.web.responses import SCREEN_RESPONSES

router = APIRouter(prefix="/profile", tags=["appointment list"])


@router.put("/appointments", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def appointment_list_page(screen: ScreenRequestDep) -> dict[str, Any]:
    """The appointment list screen (page object)."""
    return (await _screen(screen.rt, screen.actor, screen.layout, None, screen.client_id)).to_json()


@router.patch("/appointments", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def appointment_list_poll(screen: ScreenRequestDep) -> dict[str, Any]:
    """The list's poll: an update set with what changed since the state token (empty when nothing did)."""
    return (await _screen(screen.rt, screen.actor, screen.layout, screen.state or "", None)).to_json()


async def _screen(
    rt: Runtime, actor: Actor, layout: Layout, state: str | None, client_id: str | None
) -> Page | UpdateSet:
    topics = appointment_list.topics(actor)

    async def render() -> Page:
        async with rt.db.read() as session:
            views = await list_appointments(session, actor)
        return appointment_list.render(
            views, actor, now=rt.clock.now(), layout=layout, timeout=rt.settings.poll_list_seconds
        )

    if state is None:
        return await rt.screens.page(topics, rt.wall(), render, viewer=Viewer(client_id, actor.user_id))
    return await rt.screens.poll(
        state,
        topics,
        rt.wall(),
        render,
        screen=appointment_list.SCREEN,
        timeout=rt.settings.poll_list_seconds,
    )
