"""The single sign-on administration screen (docs/administration.md#single-sign-on). Admins only; anyone else gets
404. The rules are the JSON API's (``services/accounts/sso_admin.py``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from doctordesk.screens.viewing import Viewing
from doctordesk.services.accounts import sso_admin
from doctordesk.services.admin import sso_screen
from doctordesk.web.deps import SCREEN_HEADERS, FormDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.responses import SUBMIT_RESPONSES, form_body
from doctordesk.web.screen_routes import Route, screen_routes

router = APIRouter(prefix="/profile/admin", tags=["administration screens"])

Slug = Annotated[
    str, Path(min_length=1, max_length=sso_admin.MAX_SLUG, pattern=sso_admin.SLUG_PATTERN, description="The provider")
]
_CLAIM = {"type": "string", "maxLength": sso_admin.MAX_CLAIM, "pattern": r"^[A-Za-z0-9_.:-]*$"}
_FLAG = {"type": "string", "enum": ["true", "false"]}
_FIELDS: dict[str, Any] = {
    "name": {"type": "string", "minLength": 1, "maxLength": sso_admin.MAX_NAME},
    "issuer": {
        "type": "string",
        "minLength": sso_admin.MIN_ISSUER,
        "maxLength": sso_admin.MAX_ISSUER,
        "description": "https://… (plain http:// only on a loopback host in development)",
    },
    "client_id": {"type": "string", "minLength": 1, "maxLength": sso_admin.MAX_CLIENT},
    "client_secret": {"type": "string", "maxLength": sso_admin.MAX_CLIENT, "description": "Empty: keep the stored one"},
    "match_claim": _CLAIM,
    "match_field": {"type": "string", "enum": list(sso_admin.MATCH_FIELDS)},
    "role_claim": _CLAIM,
    "role_map": {"type": "string", "maxLength": 5000, "description": "value=role pairs, comma-separated"},
    "default_role": {"type": "string", "enum": ["", "support", "admin"]},
    "create_users": _FLAG,
    "active": _FLAG,
}
SAVE_BODY = form_body(_FIELDS, required=("name", "issuer", "client_id"))
NEW_BODY = form_body(
    {
        "slug": {
            "type": "string", "minLength": 1, "maxLength": sso_admin.MAX_SLUG, "pattern": sso_admin.SLUG_PATTERN,
        },
        **_FIELDS,
    },
    required=("slug", "name", "issuer", "client_id", "client_secret"),
)  # fmt: skip


def _page(screen: ScreenRequest) -> Viewing:
    return screen.viewing(sso_screen.sso_page)


screen_routes(
    router,
    "/sso",
    _page,
    page=Route("sso_page", "The single sign-on providers, each in a form, and a form to add one."),
    poll=Route("sso_poll", "The single sign-on screen's poll."),
)


@router.post("/sso/create", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **NEW_BODY})
async def add_provider(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Add an OpenID Connect provider (the issuer must be https://); audited."""
    return await screen.submit(sso_screen.create, form, page=_page(screen))


@router.post("/sso/{slug}", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **SAVE_BODY})
async def save_provider(screen: ScreenRequestDep, slug: Slug, form: FormDep) -> dict[str, Any]:
    """Change a provider; an empty client secret keeps the stored one; audited."""
    return await screen.submit(sso_screen.save, slug, form, page=_page(screen))


@router.post("/sso/{slug}/delete", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def delete_provider(screen: ScreenRequestDep, slug: Slug) -> dict[str, Any]:
    """Delete a provider (its users stay; they sign in with a password an admin gives them); audited."""
    return await screen.submit(sso_screen.delete, slug, page=_page(screen))
