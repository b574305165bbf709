"""One's own security page (docs/accounts.md#security-page): any signed-in user. Every change it makes needs a
recent authentication (403 REAUTHENTICATION_REQUIRED, judged before anything is read or written; the web app asks
"Confirm it is you" and sends the request again); another's session, phone, passkey or app is 404."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request

from doctordesk.domain.inputs import MAX_ID
from doctordesk.screens.viewing import Viewing
from doctordesk.services.accounts import reauth
from doctordesk.services.security import screen as security_screen
from doctordesk.web.deps import SCREEN_HEADERS, FormDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import SUBMIT_RESPONSES, form_body
from doctordesk.web.routers.mfa import relying_party
from doctordesk.web.screen_routes import Route, screen_routes

router = APIRouter(prefix="/profile", tags=["security"])

SessionId = Annotated[int, Path(ge=1, le=MAX_ID, description="One of your sessions"), STRICT_ID]
DeviceId = Annotated[int, Path(ge=1, le=MAX_ID, description="One of your phones"), STRICT_ID]
PasskeyId = Annotated[int, Path(ge=1, le=MAX_ID, description="One of your passkeys"), STRICT_ID]
AppId = Annotated[int, Path(ge=1, le=MAX_ID, description="An app you allowed"), STRICT_ID]
CODE_BODY = form_body(
    {"code": {"type": "string", "minLength": 1, "maxLength": 32, "description": "The code the app shows"}},
    required=("code",),
)

PASSWORD_BODY = form_body(
    {
        "password": {"type": "string", "minLength": 1, "maxLength": 1024, "description": "Your current password"},
        "new_password": {"type": "string", "minLength": 8, "maxLength": 1024, "description": "8 to 1024 characters"},
        "new_password_again": {"type": "string", "maxLength": 1024, "description": "The new password again"},
    },
    required=("password", "new_password", "new_password_again"),
)
PASSKEY_BODY = form_body(
    {
        "ticket": {"type": "string", "minLength": 1, "maxLength": 128, "description": "From /auth/passkeys/options"},
        "credential": {"type": "string", "minLength": 2, "maxLength": 16384,
                       "description": "The object the PublicKeyCredential's toJSON() gives, as JSON text"},
        "name": {"type": "string", "maxLength": 64, "description": "To tell your passkeys apart (optional)"},
    },
    required=("ticket", "credential"),
)  # fmt: skip
MAIL_BODY = form_body(
    {
        "email": {"type": "string", "maxLength": 254, "description": "Where the clinic mails you; empty: no mail"},
        "new_request": {"type": "string", "enum": ["true", "false"], "description": "Mail a new request for you"},
        "canceled_by_patient": {"type": "string", "enum": ["true", "false"],
                                "description": "Mail a patient's cancellation of your appointment"},
    },
    required=(),
)  # fmt: skip


def _page(screen: ScreenRequest) -> Viewing:
    return screen.viewing(security_screen.page)


screen_routes(
    router,
    "/security",
    _page,
    page=Route(
        "security_page",
        "Your sessions and phones, passkeys, authenticator app, recovery codes left and connected apps.",
    ),
    poll=Route("security_poll", "The security page's poll."),
)


async def _recent(screen: ScreenRequest) -> None:
    await reauth.require_recent(screen.rt, screen.actor)


@router.post("/security/sessions/{token_id}/end", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def end_session(screen: ScreenRequestDep, token_id: SessionId) -> dict[str, Any]:
    """End one of your sessions: it is signed out at once, its streams close."""
    await _recent(screen)
    return await screen.submit(security_screen.end_session, token_id, page=_page(screen))


@router.post("/security/devices/{device_id}/remove", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def remove_device(screen: ScreenRequestDep, device_id: DeviceId) -> dict[str, Any]:
    """Stop notifications to one of your phones."""
    await _recent(screen)
    return await screen.submit(security_screen.remove_device, device_id, page=_page(screen))


@router.post("/security/passkeys/{key_id}/remove", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def remove_passkey(screen: ScreenRequestDep, key_id: PasskeyId) -> dict[str, Any]:
    """Remove one of your passkeys (403 when it is the last factor of a role that must have one)."""
    await _recent(screen)
    return await screen.submit(security_screen.remove_passkey, key_id, page=_page(screen))


@router.post("/security/totp/start", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def totp_start(screen: ScreenRequestDep) -> dict[str, Any]:
    """Start setting up an authenticator app: the page shows its QR code and key (403 while one is on)."""
    await _recent(screen)
    return await screen.submit(security_screen.totp_start, page=_page(screen))


@router.post("/security/totp/confirm", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **CODE_BODY})
async def totp_confirm(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Turn the authenticator app on with the code it shows; the recovery codes are on this answer only."""
    await _recent(screen)
    return await screen.submit(security_screen.totp_confirm, form, page=_page(screen))


@router.post("/security/totp/off", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def totp_off(screen: ScreenRequestDep) -> dict[str, Any]:
    """Turn the authenticator app off, or drop a set-up not yet confirmed."""
    await _recent(screen)
    return await screen.submit(security_screen.totp_off, page=_page(screen))


@router.post("/security/recovery-codes", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def new_recovery_codes(screen: ScreenRequestDep) -> dict[str, Any]:
    """Ten new recovery codes, on this answer only; the old ones stop working."""
    await _recent(screen)
    return await screen.submit(security_screen.new_codes, page=_page(screen))


@router.post("/security/apps/{client_pk}/revoke", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def revoke_app(screen: ScreenRequestDep, client_pk: AppId) -> dict[str, Any]:
    """Revoke an app's access: its access and refresh tokens stop working at once."""
    await _recent(screen)
    return await screen.submit(security_screen.revoke_app, client_pk, page=_page(screen))


@router.post("/security/password", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **PASSWORD_BODY})
async def change_password(screen: ScreenRequestDep, form: FormDep, request: Request) -> dict[str, Any]:
    """Change your password: the current one is checked like a sign-in (a wrong one counts as a failed login); every
    other session, app access and phone registration ends, this session stays."""
    await _recent(screen)
    host = request.client.host if request.client else None
    passwords = request.app.state.passwords
    return await screen.submit(security_screen.change_password, passwords, form, client_host=host, page=_page(screen))


@router.post("/security/sign-out-elsewhere", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def sign_out_elsewhere(screen: ScreenRequestDep) -> dict[str, Any]:
    """End every other session, app access, stream ticket and phone registration of yours; this session stays."""
    await _recent(screen)
    return await screen.submit(security_screen.sign_out_elsewhere, page=_page(screen))


@router.post("/security/passkeys", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **PASSKEY_BODY})
async def add_passkey(screen: ScreenRequestDep, form: FormDep, request: Request) -> dict[str, Any]:
    """Keep the passkey your browser just created for the challenge of POST /auth/passkeys/options."""
    await _recent(screen)
    return await screen.submit(security_screen.add_passkey, relying_party(request), form, page=_page(screen))


@router.post("/security/mail", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **MAIL_BODY})
async def save_mail(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Doctors and support: the address the clinic mails you at and the changes to be mailed for
    (docs/notifications.md#staff-mail); anyone else gets 404."""
    await _recent(screen)
    return await screen.submit(security_screen.save_mail, form, page=_page(screen))
