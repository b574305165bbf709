"""The pages behind a reminder's links (docs/notifications.md#reminders): no sign-in, the token in the path is the
only credential (single use, until the appointment's start). GET shows and changes nothing (mail scanners open
links); POST acts."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from fastapi.responses import HTMLResponse

from doctordesk import i18n
from doctordesk.services.reminders import links
from doctordesk.web import reminder_page
from doctordesk.web.deps import RuntimeDep

router = APIRouter(tags=["reminders"])

Token = Annotated[str, Path(max_length=links.MAX_TOKEN_CHARS, description="The token of the reminder's link")]
HEADERS = {"Cache-Control": "no-store"}
PAGE: dict[str, Any] = {"content": {"text/html": {}}, "description": "The page, in the patient's language"}
RESPONSES: dict[int | str, dict[str, Any]] = {
    200: PAGE,
    404: {"content": {"text/html": {}}, "description": "Not a link of this clinic (forged or mistyped): a page"},
    410: {"content": {"text/html": {}}, "description": "Already used, or the appointment has started: a page"},
}


def _answer(view: links.LinkView, token: str) -> HTMLResponse:
    language = view.language if view.state is not links.State.INVALID else i18n.current()
    status, page = reminder_page.render(view, language=language, action_path=links.PATH + token)
    return HTMLResponse(page, status_code=status, headers=HEADERS)


@router.get("/reminder/{token}", response_class=HTMLResponse, responses=RESPONSES)
async def reminder_link_page(rt: RuntimeDep, token: Token) -> HTMLResponse:
    """The page of a reminder's link: the appointment and a button to confirm ("I will come") or to cancel; or
    why the link cannot be used (used, expired, changed, past the cancellation deadline, unknown)."""
    return _answer(await links.look(rt, token), token)


@router.post("/reminder/{token}", response_class=HTMLResponse, responses=RESPONSES)
async def use_reminder_link(rt: RuntimeDep, token: Token) -> HTMLResponse:
    """The page's button: the patient confirms they will come, or cancels (the patient's own cancellation, its
    deadline included); the outcome as a page. A link works once."""
    return _answer(await links.use(rt, token), token)
