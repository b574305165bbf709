"""Email addresses as a patient's record keeps them: checked by their syntax with ``email-validator`` (no DNS
lookup: a record is saved offline, and a clinic's relay reports what does not arrive), stored in the normalized
form the library gives (the domain lowercased and in its Unicode form)."""

from __future__ import annotations

from email_validator import EmailNotValidError, validate_email

from doctordesk.domain.texts import N_

MAX_CHARS = 254  # RFC 5321's limit for a forward path, less its angle brackets
# The shape an API schema states: empty (none), or one @ between characters that are not white space.
ADDRESS_PATTERN = r"^$|^[^\s@]+@[^\s@]+$"
NOT_AN_ADDRESS = N_("Enter an email address such as name@example.org.")


def check_address(raw: str) -> str:
    """``raw`` as an address to store; ValueError (with ``NOT_AN_ADDRESS``) when it is none."""
    text = raw.strip()
    if not text or len(text) > MAX_CHARS:
        raise ValueError(NOT_AN_ADDRESS)
    try:
        return validate_email(text, check_deliverability=False).normalized
    except EmailNotValidError:
        raise ValueError(NOT_AN_ADDRESS) from None


def optional_address(raw: str | None) -> str | None:
    """An address, or None for an empty field (the patient has none)."""
    if raw is None or not raw.strip():
        return None
    return check_address(raw)
