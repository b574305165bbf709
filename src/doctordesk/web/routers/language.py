"""The language: the shell's texts in the request's language, and a user's stored choice."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form

from doctordesk import i18n
from doctordesk.i18n.shell import LANGUAGE_NAMES, SHELL_TEXTS
from doctordesk.services.accounts import languages
from doctordesk.web.deps import ActorDep, RuntimeDep
from doctordesk.web.responses import INVALID, UNAUTHORIZED

router = APIRouter(tags=["language"])


@router.get("/i18n/texts")
async def shell_texts() -> dict[str, Any]:
    """The web app shell's texts (English msgid → text) in the request's language (``Accept-Language``), and the
    languages offered. No authentication: the sign-in page needs them."""
    return {
        "language": i18n.current(),
        "languages": [{"code": code, "name": LANGUAGE_NAMES[code]} for code in i18n.LOCALES],
        "texts": {msgid: i18n._(msgid) for msgid in SHELL_TEXTS},
    }


@router.put("/profile/language", responses={401: UNAUTHORIZED, 422: INVALID})
async def choose_language(
    rt: RuntimeDep,
    actor: ActorDep,
    # The enum is stated for clients; the service judges the value itself, so its refusal is in the reader's language.
    language: Annotated[str, Form(description="en or de", json_schema_extra={"enum": list(i18n.LOCALES)})],
) -> dict[str, Any]:
    """Store the user's language: every screen, error and push notification for them uses it from now on
    (it wins over the browser's Accept-Language)."""
    return {"language": await languages.choose(rt, actor, language)}
