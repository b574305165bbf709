"""Second factors of a sign-in, as plain rules: TOTP (RFC 6238), one-time recovery codes, the per-role policy.

No I/O: the clock's time is passed in; hashing recovery codes is SHA-256 of 80 random bits, enough because the
login throttle bounds guessing and a code works once (docs/accounts.md#second-factor).
"""

from __future__ import annotations

import hashlib
import math
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import pyotp

from doctordesk.domain.roles import Role

ISSUER = "doctordesk"
RECOVERY_CODES = 10
# A code is accepted one 30-second step before and after the current one (clocks drift; RFC 6238 §5.2).
TOTP_WINDOW = 1
_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: read off paper without doubt

# The kinds a login can offer as its second factor (the MFA_REQUIRED answer names the user's own).
TOTP = "totp"
PASSKEY = "passkey"
RECOVERY = "recovery"


def new_totp_secret() -> str:
    """A fresh base32 secret of 160 bits (RFC 4226's recommended length)."""
    return pyotp.random_base32(length=32)


def otpauth_uri(secret: str, *, username: str) -> str:
    """The ``otpauth://`` URI an authenticator app reads from a QR code."""
    return pyotp.TOTP(secret).provisioning_uri(name=username, issuer_name=ISSUER)


def totp_step(secret: str, code: str, *, at: datetime, last_step: int | None) -> int | None:
    """The time step ``code`` belongs to when it is valid at ``at`` and newer than ``last_step`` (a code seen once
    is not taken again); None otherwise."""
    code = code.strip().replace(" ", "")
    if len(code) != 6 or not code.isascii() or not code.isdigit():
        return None
    totp = pyotp.TOTP(secret)
    now_step = totp.timecode(at)
    for offset in range(-TOTP_WINDOW, TOTP_WINDOW + 1):
        step = now_step + offset
        if secrets.compare_digest(totp.generate_otp(step), code) and (last_step is None or step > last_step):
            return step
    return None


def spent_code_wait(secret: str, code: str, *, at: datetime, last_step: int | None) -> int | None:
    """When ``code`` is a right code at ``at`` that was already taken (its step is not newer than ``last_step``,
    e.g. the code that just confirmed the enrolment): the seconds until the authenticator shows a code that will
    be taken, at least 1. None for any other code."""
    code = code.strip().replace(" ", "")
    if last_step is None or len(code) != 6 or not code.isascii() or not code.isdigit():
        return None
    totp = pyotp.TOTP(secret)
    now_step = totp.timecode(at)
    for offset in range(-TOTP_WINDOW, TOTP_WINDOW + 1):
        step = now_step + offset
        if step <= last_step and secrets.compare_digest(totp.generate_otp(step), code):
            next_start = (last_step + 1) * totp.interval
            return max(1, math.ceil(next_start - at.timestamp()))
    return None


def new_recovery_codes() -> list[str]:
    """Ten codes of ten characters (``xxxxx-xxxxx``), each about 49 bits."""
    return [_code() for _ in range(RECOVERY_CODES)]


def _code() -> str:
    raw = "".join(secrets.choice(_ALPHABET) for _ in range(10))
    return f"{raw[:5]}-{raw[5:]}"


def normal_recovery_code(code: str) -> str:
    """A code as typed (any case, spaces or dashes anywhere) in its stored form."""
    raw = "".join(ch for ch in code.lower() if ch.isalnum())
    return f"{raw[:5]}-{raw[5:]}" if len(raw) == 10 else raw


def recovery_hash(code: str) -> str:
    return hashlib.sha256(normal_recovery_code(code).encode()).hexdigest()


def looks_like_recovery_code(code: str) -> bool:
    raw = normal_recovery_code(code).replace("-", "")
    return len(raw) == 10 and all(ch in _ALPHABET for ch in raw)


@dataclass(frozen=True, slots=True)
class Policy:
    """The roles that must sign in with a second factor."""

    required: frozenset[Role]

    def requires(self, role: Role) -> bool:
        return role in self.required


def policy_of(roles: Iterable[str]) -> Policy:
    return Policy(required=frozenset(Role(r) for r in roles))


@dataclass(frozen=True, slots=True)
class Factors:
    """What a user has enrolled."""

    totp: bool
    passkeys: int
    recovery_left: int

    @property
    def any(self) -> bool:
        return self.totp or self.passkeys > 0

    def kinds(self) -> list[str]:
        kinds = [TOTP] if self.totp else []
        if self.passkeys:
            kinds.append(PASSKEY)
        if self.recovery_left and self.any:
            kinds.append(RECOVERY)
        return kinds
