"""The form bodies of the administration screens' submissions, as /openapi.json states them (``openapi_extra``).

The screens read their forms themselves (services/admin_*_screen.py), so that a refusal is their own message in
the reader's language; these descriptions state the same rules from the same constants. A form field left empty
counts as not sent (the screens' forms send every input), so optional fields also take ``""``. Fields the forms do
not know are ignored, not refused: the forms stay open to them (no ``additionalProperties: false``).
"""

from __future__ import annotations

from typing import Any

from doctordesk.domain.inputs import MULTI_LINE_TEXT_PATTERN, NON_BLANK_TEXT_PATTERN
from doctordesk.domain.mail.addresses import MAX_CHARS as MAX_ADDRESS_CHARS
from doctordesk.domain.names import NAME_PATTERN, OPTIONAL_NAME_PATTERN, REFUSED_CLASS
from doctordesk.domain.review.fees import KINDS, MAX_PERCENT
from doctordesk.domain.roles import Role
from doctordesk.domain.scheduling.suggestions import HH_MM_PATTERN, TIMEZONES, ExceptionKind
from doctordesk.domain.webhooks.rules import MAX_DESCRIPTION_CHARS, MAX_URL_CHARS, SUBSCRIBABLE, URL_PATTERN
from doctordesk.screens.admin.webhooks import type_field
from doctordesk.services.accounts.auth import MAX_PASSWORD, MIN_PASSWORD
from doctordesk.services.admin.hours import MAX_BLOCKS
from doctordesk.services.admin.policies import MAX_RECORD_CHARS
from doctordesk.services.admin.users import USERNAME_PATTERN
from doctordesk.web.responses import FLAG_FIELD, ID_FIELD, form_body

EMPTY: dict[str, Any] = {"type": "string", "enum": [""]}
ID_OR_EMPTY: dict[str, Any] = {"anyOf": [ID_FIELD, EMPTY]}
ROLES = [r.value for r in Role]
ZONE: dict[str, Any] = {"type": "string", "enum": list(TIMEZONES), "description": "An IANA zone, e.g. Europe/Berlin"}
ZONE_OR_EMPTY: dict[str, Any] = {**ZONE, "enum": ["", *TIMEZONES], "description": "Empty: unchanged or none"}
DAY: dict[str, Any] = {"type": "string", "format": "date", "description": "YYYY-MM-DD"}
DAY_OR_EMPTY: dict[str, Any] = {"anyOf": [DAY, EMPTY]}


def _text(max_length: int, *, required: bool = False, description: str = "") -> dict[str, Any]:
    """A one-line text field; a required one needs something besides white space (the screens strip it)."""
    field: dict[str, Any] = {"type": "string", "maxLength": max_length}
    if required:
        field |= {"minLength": 1, "pattern": NON_BLANK_TEXT_PATTERN}
    return field | ({"description": description} if description else {})


def _name(max_length: int, *, required: bool = False, description: str = "") -> dict[str, Any]:
    """A name field (the name rule, domain/names.py); a required one needs something besides white space."""
    field: dict[str, Any] = {"type": "string", "maxLength": max_length}
    field |= {"minLength": 1, "pattern": NAME_PATTERN} if required else {"pattern": OPTIONAL_NAME_PATTERN}
    return field | ({"description": description} if description else {})


# --- users ---------------------------------------------------------------------------------------------------

_DOCTOR_FIELDS: dict[str, Any] = {
    "specialty": _name(64, description="Doctors only; empty: General practice (new) or unchanged"),
    "timezone": ZONE_OR_EMPTY,
    "can_prescribe": FLAG_FIELD,
    "chat_enabled": FLAG_FIELD,
}
_PATIENT_FIELDS: dict[str, Any] = {
    "email": _text(
        MAX_ADDRESS_CHARS,
        description="A patient's, doctor's or support member's address (on a "
        "user's page; a new user: patients only); empty: none",
    ),
}
NEW_USER_BODY = form_body(
    {
        "role": {"type": "string", "enum": ROLES},
        "username": {
            "type": "string",
            "pattern": USERNAME_PATTERN,
            "description": "Letters, digits, '.', '_', '-', starting with a letter or digit; stored in lowercase",
        },
        "display_name": _name(128, required=True),
        "password": {
            "type": "string",
            "pattern": f"^([^\\x00-\\x1f\\x7f-\\x9f]{{{MIN_PASSWORD},{MAX_PASSWORD}}})?$",
            "description": f"{MIN_PASSWORD} to {MAX_PASSWORD} characters; empty: one is generated and shown once",
        },
        **_DOCTOR_FIELDS,
        **_PATIENT_FIELDS,
    },
    required=("role", "username", "display_name"),
)
SAVE_USER_BODY = form_body(
    {"display_name": _name(128, required=True), **_DOCTOR_FIELDS, **_PATIENT_FIELDS}, required=("display_name",)
)

# --- signing in ----------------------------------------------------------------------------------------------

MFA_POLICY_BODY = form_body({f"required~{role}": FLAG_FIELD for role in ROLES})

# --- locations -----------------------------------------------------------------------------------------------

NEW_LOCATION_BODY = form_body(
    {"name": _name(128, required=True), "address": _name(255), "timezone": ZONE}, required=("name", "timezone")
)
SAVE_LOCATION_BODY = form_body(
    {"name": _name(128, description="Empty: unchanged"), "address": _name(255), "timezone": ZONE_OR_EMPTY}
)

# --- work hours ----------------------------------------------------------------------------------------------

# The lines n = 1 to MAX_BLOCKS, spelled as the screen names them (the screen reads no others).
_LINE = "(" + "|".join(str(n) for n in range(1, MAX_BLOCKS + 1)) + ")"
TIME_OR_EMPTY: dict[str, Any] = {"type": "string", "pattern": f"^$|{HH_MM_PATTERN}", "description": "HH:MM"}
# --- clinic settings -----------------------------------------------------------------------------------------

CLINIC_BODY = form_body(
    {
        "reminders_enabled": FLAG_FIELD,
        "reminder_hours": {"type": "string", "maxLength": 100, "description": "Hours before the start, e.g. 24,2"},
        "quiet_begin": {**TIME_OR_EMPTY, "description": "HH:MM; empty: no quiet hours (with quiet_end)"},
        "quiet_end": {**TIME_OR_EMPTY, "description": "HH:MM; empty: no quiet hours (with quiet_begin)"},
        "waitlist_mode": {"type": "string", "enum": ["one-at-a-time", "all-at-once"]},
        "waitlist_offer_minutes": {"type": "string", "pattern": "^[0-9]{1,4}$", "description": "1 to 1440"},
        "waitlist_direct_move": FLAG_FIELD,
    }
)

WEEKLY_BODY = form_body(
    {"doctor": ID_FIELD, "location": ID_FIELD},
    required=("doctor", "location"),
    patternProperties={
        f"^weekday~{_LINE}$": {
            "type": "string",
            "enum": ["", *(str(d) for d in range(7))],
            "description": f"Line n's day (n = 1 to {MAX_BLOCKS}), 0 = Monday; an empty day drops the line",
        },
        f"^(opens|closes)~{_LINE}$": TIME_OR_EMPTY,
    },
)
# The audit trail's filter form: days, the last one included (empty fields: no filter on them).
AUDIT_FILTER_BODY = form_body(
    {
        "actor": {**ID_OR_EMPTY, "description": "Empty: any actor"},
        "appointment": {**ID_OR_EMPTY, "description": "Empty: any appointment"},
        "action": {"type": "string", "maxLength": 64, "pattern": r"^[^\x00-\x20\x7f-\x9f]*$",
                   "description": "An action name, e.g. appointment.approve"},
        "from": {**DAY_OR_EMPTY, "description": "First day (UTC), YYYY-MM-DD"},
        "to": {**DAY_OR_EMPTY, "description": "Last day (UTC, included), YYYY-MM-DD"},
    }
)  # fmt: skip
EXCEPTION_BODY = form_body(
    {
        "doctor": ID_FIELD,
        "location": {**ID_OR_EMPTY, "description": "Empty: every location of the doctor"},
        "day": DAY,
        "kind": {"type": "string", "enum": list(ExceptionKind.ALL)},
        "opens": TIME_OR_EMPTY,
        "closes": TIME_OR_EMPTY,
        "note": _text(255),
    },
    required=("doctor", "day", "kind"),
)

# --- fees ----------------------------------------------------------------------------------------------------

FEE_BODY = form_body(
    {
        "kind": {"type": "string", "enum": list(KINDS)},
        "doctor": {**ID_OR_EMPTY, "description": "Empty: any doctor"},
        "location": {**ID_OR_EMPTY, "description": "Empty: any location"},
        "amount": {"type": "string", "pattern": r"^([0-9]{1,6}(\.[0-9]{1,2})?)?$", "description": "e.g. 80.50"},
        "percent": {
            "anyOf": [{"type": "integer", "minimum": 0, "maximum": MAX_PERCENT}, EMPTY],
            "description": "Surcharges: per cent of the doctor fee (ASCII digits)",
        },
        "currency": {"type": "string", "pattern": "^([A-Za-z]{3})?$", "description": "ISO 4217; empty: EUR"},
        "effective_from": {**DAY_OR_EMPTY, "description": "Empty or today: now; never a past day"},
        "retired": FLAG_FIELD,
    },
    required=("kind",),
)

# --- insurance -----------------------------------------------------------------------------------------------

# Names (domain/names.py) without commas.
_SERVICE_NAMES = rf"[^,{REFUSED_CLASS}]{{0,64}}"
_POLICY_FIELDS: dict[str, Any] = {
    "insurer": _name(128, required=True),
    "policy_number": _name(64, required=True),
    "valid_from": DAY,
    "valid_to": {**DAY, "description": "YYYY-MM-DD, not before valid_from"},
    "excluded_services": {
        "type": "string",
        "maxLength": 2000,
        "pattern": f"^{_SERVICE_NAMES}(,{_SERVICE_NAMES})*$",
        "description": "Service names of up to 64 characters, comma-separated",
    },
    "third_party_data": {
        "type": "string",
        "maxLength": MAX_RECORD_CHARS,
        "pattern": MULTI_LINE_TEXT_PATTERN,
        "description": "The insurer's record as received; empty clears it",
    },
}
_TICKS = {"^(network_doctor|network_location|excluded_doctor)~[1-9][0-9]{0,14}$": FLAG_FIELD}
NEW_POLICY_BODY = form_body(
    {"patient": ID_FIELD, **_POLICY_FIELDS},
    required=("patient", "insurer", "policy_number", "valid_from", "valid_to"),
    multiline=("third_party_data",),
    patternProperties=_TICKS,
)
SAVE_POLICY_BODY = form_body(
    {
        **_POLICY_FIELDS,
        "patient": {**ID_OR_EMPTY, "description": "The patient whose policies the screen shows"},
        "insurer": _name(128, description="Empty: unchanged"),
        "policy_number": _name(64, description="Empty: unchanged"),
        "valid_from": {**DAY_OR_EMPTY, "description": "Empty: unchanged"},
        "valid_to": {**DAY_OR_EMPTY, "description": "Empty: unchanged; not before valid_from"},
    },
    multiline=("third_party_data",),
    patternProperties=_TICKS,
)

# --- webhooks ------------------------------------------------------------------------------------------------

_TYPES = {type_field(t): FLAG_FIELD for t in SUBSCRIBABLE}
# At least one event type ticked.
_SOME_TYPE = [{"properties": {name: {"const": "true"}}, "required": [name]} for name in _TYPES]
_URL: dict[str, Any] = {
    "type": "string",
    "maxLength": MAX_URL_CHARS,
    "pattern": URL_PATTERN,
    "description": "http or https; loopback and private addresses are refused unless the server allows them",
}
_HOOK_FIELDS: dict[str, Any] = {
    "description": _text(MAX_DESCRIPTION_CHARS),
    "include_content": FLAG_FIELD,
    **_TYPES,
}
NEW_WEBHOOK_BODY = form_body({"url": _URL, **_HOOK_FIELDS}, required=("url",), anyOf=_SOME_TYPE)
SAVE_WEBHOOK_BODY = form_body(
    {"url": {**_URL, "pattern": f"^$|{URL_PATTERN}", "description": "Empty: unchanged"}, **_HOOK_FIELDS},
    anyOf=_SOME_TYPE,
)
