"""How an OpenID provider's claims map to a doctordesk user (docs/accounts.md#single-sign-on): which claim finds
the user, which names their role, what a new user is called."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from doctordesk.domain.names import name_problem
from doctordesk.domain.roles import Role

# Roles a first sign-in may create: a doctor needs a profile and a patient a record that an admin makes.
CREATABLE = (Role.SUPPORT, Role.ADMIN)
MAX_DISPLAY_NAME = 128
_USERNAME = re.compile(r"[a-z0-9][a-z0-9._@-]{0,63}")


def requested_claims(match_claim: str, role_claim: str | None) -> dict[str, dict[str, None]]:
    """The OpenID ``claims`` request parameter asking the userinfo endpoint for the claims the mapping reads."""
    wanted = {match_claim: None, "name": None}
    if role_claim:
        wanted[role_claim] = None
    return {"userinfo": wanted}


def match_value(claims: Mapping[str, Any], claim: str) -> str | None:
    value = claims.get(claim)
    if claim == "email" and claims.get("email_verified") is False:
        return None  # an unverified address finds nobody
    return value.strip() if isinstance(value, str) and value.strip() else None


def mapped_role(
    claims: Mapping[str, Any], role_claim: str | None, role_map: Mapping[str, Any], default: str | None
) -> Role | None:
    """The first value of the role claim (a string or a list) that the map names, else the default; only roles a
    sign-in may create."""
    raw = claims.get(role_claim) if role_claim else None
    values = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
    for value in values:
        mapped = role_map.get(value) if isinstance(value, str) else None
        if mapped in {r.value for r in CREATABLE}:
            return Role(mapped)
    return Role(default) if default in {r.value for r in CREATABLE} else None


def new_username(claims: Mapping[str, Any], match_claim: str) -> str | None:
    value = match_value(claims, match_claim)
    name = value.lower() if value else ""
    return name if _USERNAME.fullmatch(name) else None


def display_name(claims: Mapping[str, Any], fallback: str) -> str:
    """The provider's ``name`` for a new user when it passes the name rule (domain/names.py: nothing invisible,
    something that shows); otherwise ``fallback`` (the username): the provider's data is not the user's typing,
    so a name that cannot be shown does not refuse the sign-in, it is just not used."""
    name = claims.get("name")
    if not isinstance(name, str):
        return fallback
    name = name.strip()[:MAX_DISPLAY_NAME].strip()
    return name if name_problem(name, max_chars=MAX_DISPLAY_NAME) is None else fallback
