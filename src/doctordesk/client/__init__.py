"""The doctordesk client SDK: log in, open screens, and keep each page in sync with the service.

    from doctordesk.client import Client

    async with Client("http://127.0.0.1:8000") as client:
        await client.login("doctor1", "demo")
        screen = await client.open("/profile/appointments")
        async for change in screen.changes():
            print(change.kind, screen.element("needs-decision")["label"])

A ``Screen`` holds the current page (the JSON element tree of docs/protocol.md), applies every update set with
the protocol's own ``apply``, polls at the page's timeout, follows the real-time stream by the rules of spec 6.1,
and performs element actions (``activate``) with the form values set by ``set_value``. Guide: docs/client-sdk.md.
"""

from doctordesk.client.changes import Change, Changes
from doctordesk.client.errors import (
    ApiError,
    AppointmentChanged,
    ChatDisabled,
    ClientError,
    DateNotCovered,
    Forbidden,
    ForbiddenByPolicy,
    InvalidTransition,
    NotFound,
    NotLoggedIn,
    PayloadTooLarge,
    ProtocolError,
    ServerError,
    ThirdPartyDataInvalid,
    TooManyRequests,
    TransportError,
    Unauthorized,
    ValidationError,
)
from doctordesk.client.forms import FileUpload
from doctordesk.client.screen import ElementDisabled, Screen, ScreenClosed
from doctordesk.client.session import Client, PushRegistration, User

__all__ = [
    "ApiError",
    "AppointmentChanged",
    "Change",
    "Changes",
    "ChatDisabled",
    "Client",
    "ClientError",
    "DateNotCovered",
    "ElementDisabled",
    "FileUpload",
    "Forbidden",
    "ForbiddenByPolicy",
    "InvalidTransition",
    "NotFound",
    "NotLoggedIn",
    "PayloadTooLarge",
    "ProtocolError",
    "PushRegistration",
    "Screen",
    "ScreenClosed",
    "ServerError",
    "ThirdPartyDataInvalid",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "User",
    "ValidationError",
]
