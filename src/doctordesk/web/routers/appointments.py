"""The appointment list screen: PUT gives the page, PATCH is its poll."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from doctordesk.screens import appointment_list
from doctordesk.screens.protocol import Page, UpdateSet
from doctordesk.screens.state import Viewer
from doctordesk.services.appointments import list_appointments
from doctordesk.web.deps import ActorDep, ClientIdDep, LayoutDep, RuntimeDep, StateDep
from doctordesk.web.responses import SCREEN_RESPONSES

router = APIRouter(prefix="/profile", tags=["appointment list"])


@router.put("/appointments", responses=SCREEN_RESPONSES)
async def appointment_list_page(
    rt: RuntimeDep, actor: ActorDep, layout: LayoutDep, client_id: ClientIdDep
) -> dict[str, Any]:
    """The appointment list screen (page object)."""
    return (await _screen(rt, actor, layout, None, client_id)).to_json()


@router.patch("/appointments", responses=SCREEN_RESPONSES)
async def appointment_list_poll(rt: RuntimeDep, actor: ActorDep, layout: LayoutDep, state: StateDep) -> dict[str, Any]:
    """The list's poll: an update set with what changed since the state token (empty when nothing did)."""
    return (await _screen(rt, actor, layout, state or "", None)).to_json()


async def _screen(
    rt: RuntimeDep, actor: ActorDep, layout: LayoutDep, state: str | None, client_id: str | None
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
