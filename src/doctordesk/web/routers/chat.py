"""Chat between doctors and support (spec 4.2): the Chat screen, load more, send, close, files, thread list."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Header, Path, Query, Request
from fastapi.responses import Response

from doctordesk.domain.chat.messages import check_client_message_id
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.files.attachments import content_disposition
from doctordesk.domain.inputs import MAX_ID, MULTI_LINE_TEXT_PATTERN, NON_BLANK_MULTI_LINE_TEXT_PATTERN, parse_id
from doctordesk.domain.texts import N_
from doctordesk.services.chat import access, conversation_screen, sending_screen
from doctordesk.services.chat import drafts as chat_drafts
from doctordesk.services.chat import sending as chat_sending
from doctordesk.services.chat import threads_screen as chat_threads
from doctordesk.services.show_more_screen import PagedScreen
from doctordesk.web.deps import SCREEN_HEADERS, ActorDep, RuntimeDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import ERROR, FORBIDDEN, ROLE_READ_RESPONSES, SCREEN_RESPONSES, SUBMIT_RESPONSES
from doctordesk.web.uploads import FormReader

router = APIRouter(prefix="/profile/messages", tags=["chat"])

AppointmentQuery = Annotated[
    int, Query(alias="appointment-id", ge=1, le=MAX_ID, description="The appointment"), STRICT_ID
]
OptionalAppointmentQuery = Annotated[
    int | None,
    Query(alias="appointment-id", ge=1, le=MAX_ID, description="The appointment (default: the state token's)"),
    STRICT_ID,
]

_APPOINTMENT_ID = {"type": "integer", "minimum": 1, "maximum": MAX_ID}
_CLIENT_MESSAGE_ID = {
    "type": "string",
    "pattern": "^[A-Za-z0-9_-]{0,64}$",
    "description": "Idempotency key (or the header): up to 64 of A-Z a-z 0-9 - _",
}
_CONTENT = {"type": "string", "pattern": MULTI_LINE_TEXT_PATTERN, "description": "The message text, stored as sent"}
# Blank text is refused unless a file comes with it.
_WRITTEN = {"type": "string", "pattern": NON_BLANK_MULTI_LINE_TEXT_PATTERN}
SEND_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["appointment-id"],
                    "properties": {
                        "content": _CONTENT,
                        "appointment-id": _APPOINTMENT_ID,
                        "file": {"type": "string", "format": "binary", "description": "At most one: PDF, PNG, JPEG"},
                        "client-message-id": _CLIENT_MESSAGE_ID,
                    },
                    "anyOf": [{"required": ["file"]}, {"required": ["content"], "properties": {"content": _WRITTEN}}],
                }
            },
            "application/x-www-form-urlencoded": {
                "schema": {
                    "type": "object",
                    "required": ["appointment-id", "content"],
                    "properties": {
                        "content": {**_CONTENT, **_WRITTEN},
                        "appointment-id": _APPOINTMENT_ID,
                        "client-message-id": _CLIENT_MESSAGE_ID,
                    },
                }
            },
        },
    }
}


@router.put("/user-chat", responses={**SCREEN_RESPONSES, 403: ERROR}, openapi_extra=SCREEN_HEADERS)
async def user_chat(screen: ScreenRequestDep, appointment_id: AppointmentQuery) -> dict[str, Any]:
    """Present Chat: the Chat page (spec 2.3.1) for the appointment's thread."""
    page = await screen.viewing(conversation_screen.open_chat, appointment_id)
    return page.to_json()


@router.patch("/load-more", responses={**SCREEN_RESPONSES, 403: ERROR}, openapi_extra=SCREEN_HEADERS)
async def load_more(
    screen: ScreenRequestDep,
    appointment_id: OptionalAppointmentQuery = None,
    before: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="Load the messages older than this message id"), STRICT_ID
    ] = None,
) -> dict[str, Any]:
    """Load previous messages (with ``before``: prepended) or, as the chat's poll, the newer ones (appended)."""
    update = await conversation_screen.load_more(
        screen.rt,
        screen.actor,
        screen.state,
        layout=screen.layout,
        appointment_id=appointment_id,
        before=before,
        client_id=screen.client_id,
    )
    return update.to_json()


@router.post("/send-message", responses=SUBMIT_RESPONSES, openapi_extra={**SEND_BODY, **SCREEN_HEADERS})
async def send_message(
    request: Request,
    screen: ScreenRequestDep,
    x_client_message_id: Annotated[
        str | None,
        Header(
            description="Idempotency key: a retried send with the same key stores one message",
            json_schema_extra={"pattern": _CLIENT_MESSAGE_ID["pattern"]},
        ),
    ] = None,
) -> dict[str, Any]:
    """Save Message: text and optionally one file; answers with the chat updated and the input cleared."""
    rt = screen.rt
    reader = FormReader(max_file_bytes=rt.settings.max_upload_bytes, max_text_bytes=4 * rt.settings.max_message_chars)
    received = await reader.read(request)
    try:
        fields = received.fields
        appointment_id = parse_id(fields.get("appointment-id"))
        if appointment_id is None:
            raise ValidationFailed(fields={"appointment-id": N_("Required: the appointment's id.")})
        client_message_id = check_client_message_id(x_client_message_id or fields.get("client-message-id"))
        upload = None
        if received.file is not None:
            upload = chat_sending.Upload(received.file.filename, received.file.declared_type, received.file.file)
        form = chat_sending.SendForm(appointment_id, fields.get("content", ""), upload, client_message_id)
        update = await sending_screen.send_message(rt, screen.actor, form, token=screen.state, layout=screen.layout)
    finally:
        received.close()
    return update.to_json()


_DRAFT_JSON = {
    "type": "object",
    "required": ["appointment_id", "content", "saved_at"],
    "properties": {
        "appointment_id": {"type": "integer"},
        "content": {"type": "string", "description": "The unsent text; empty when there is no draft"},
        "saved_at": {"type": ["string", "null"], "format": "date-time", "description": "When it was last kept"},
    },
}
_DRAFT_RESPONSES: dict[int | str, dict[str, Any]] = {
    **ROLE_READ_RESPONSES,
    403: FORBIDDEN,
    200: {"description": "The draft", "content": {"application/json": {"schema": _DRAFT_JSON}}},
}


@router.get("/draft", responses=_DRAFT_RESPONSES)
async def read_draft(rt: RuntimeDep, actor: ActorDep, appointment_id: AppointmentQuery) -> dict[str, Any]:
    """The message this user has begun in the appointment's thread and not sent (docs/chat.md#drafts): kept with
    the server, so it survives a reload and follows the user to another device. Empty content: no draft."""
    return (await chat_drafts.read_draft(rt, actor, appointment_id)).to_json()


@router.put("/draft", responses=_DRAFT_RESPONSES)
async def save_draft(
    rt: RuntimeDep,
    actor: ActorDep,
    appointment_id: AppointmentQuery,
    content: Annotated[
        str,
        Form(
            description="The unsent text (the message rules; empty removes the draft)",
            json_schema_extra={"pattern": MULTI_LINE_TEXT_PATTERN},
        ),
    ] = "",
) -> dict[str, Any]:
    """Keep the user's unsent text for this thread, replacing the one kept before; empty removes it. A send
    removes it too."""
    return (await chat_drafts.save_draft(rt, actor, appointment_id, content)).to_json()


@router.post("/close", responses={**SCREEN_RESPONSES, 403: ERROR})
async def close_chat(rt: RuntimeDep, actor: ActorDep, appointment_id: AppointmentQuery) -> dict[str, Any]:
    """Close the chat: marks the thread's messages read for this reader and sends the client back to its list."""
    return (await conversation_screen.close_chat(rt, actor, appointment_id)).to_json()


@router.get(
    "/attachments/{attachment_id}",
    responses={200: {"content": {"application/pdf": {}, "image/png": {}, "image/jpeg": {}}}, 403: ERROR, 404: ERROR},
    response_class=Response,
)
async def attachment(
    rt: RuntimeDep, actor: ActorDep, attachment_id: Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]
) -> Response:
    """A message's file, for the thread's participants: the stored type, always as a download."""
    file = await access.attachment_file(rt, actor, attachment_id)
    return Response(
        file.data,
        media_type=file.mime,
        headers={
            "Content-Disposition": content_disposition(file.filename),
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "private, no-store",
        },
    )


@router.put("/threads", responses={**SCREEN_RESPONSES, 403: ERROR}, openapi_extra=SCREEN_HEADERS)
async def threads_page(screen: ScreenRequestDep) -> dict[str, Any]:
    """Support agents' thread list: threads by last activity, unread counts, latest messages."""
    return (await _threads(screen).page()).to_json()


@router.patch("/threads", responses={**SCREEN_RESPONSES, 403: ERROR}, openapi_extra=SCREEN_HEADERS)
async def threads_poll(screen: ScreenRequestDep) -> dict[str, Any]:
    """The thread list's poll."""
    return (await _threads(screen).poll(screen.state)).to_json()


@router.patch("/threads/more", responses={**SCREEN_RESPONSES, 403: ERROR}, openapi_extra=SCREEN_HEADERS)
async def threads_more(screen: ScreenRequestDep) -> dict[str, Any]:
    """Show more of the thread list: the next, less recently active threads appended."""
    return (await _threads(screen).more(screen.state, chat_threads.KEYS[0])).to_json()


def _threads(screen: ScreenRequest) -> PagedScreen:
    return screen.viewing(chat_threads.screen)
