"""SMART v2 scopes (docs/smart.md#scopes): ``patient/Appointment.rs``, ``user/Appointment.cruds``, the launch and
identity scopes, and which FHIR interaction a scope allows.

A resource scope is ``<context>/<type>.<permissions>``: the context ``patient`` (the launch's patient only),
``user`` (whatever the signed-in user may see) or ``system`` (a backend service: the whole clinic, reading and
searching only, docs/smart.md#backend-services), a served resource type or ``*``, and the permissions in SMART v2's
order, each once: ``c`` create, ``r`` read, ``u`` update, ``d`` delete, ``s`` search. A scope is only ever a
ceiling: the user's own rights (their role and ownership) still apply beneath it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

PERMISSIONS = "cruds"
SYSTEM = "system"
LAUNCH_PATIENT = "launch/patient"
LAUNCH = "launch"  # an EHR launch: the patient comes from the launch value (docs/smart.md#ehr-launch)
OFFLINE = "offline_access"
ONLINE = "online_access"
OPENID = "openid"
FHIR_USER = "fhirUser"
PLAIN_SCOPES = frozenset({LAUNCH_PATIENT, LAUNCH, OFFLINE, ONLINE, OPENID, FHIR_USER})
# What a system scope may allow: a backend service reads and searches (docs/smart.md#backend-services).
SYSTEM_PERMISSIONS = frozenset("rs")
MAX_SCOPE_CHARS = 2000

# The scopes this server knows, as a JSON Schema pattern (the admin API states it): the plain ones, or a resource
# scope with at least one permission in SMART v2's order (a system scope: r and s only).
SCOPE_PATTERN = (
    r"^(openid|fhirUser|launch|launch/patient|offline_access|online_access"
    r"|(patient|user)/(\*|[A-Z][A-Za-z]{0,63})\.(c?r?u?d?s|c?r?u?d|c?r?u|c?r|c)"
    r"|system/(\*|[A-Z][A-Za-z]{0,63})\.(rs|r|s))$"
)
_RESOURCE_SCOPE = re.compile(r"^(patient|user|system)/(\*|[A-Z][A-Za-z]{0,63})\.(c?r?u?d?s?)$", re.ASCII)


@dataclass(frozen=True, slots=True)
class ResourceScope:
    """One resource scope: ``context`` patient or user, ``resource`` a type or ``*``, ``permissions`` of cruds."""

    context: str
    resource: str
    permissions: frozenset[str]

    def covers(self, other: ResourceScope) -> bool:
        """Whether this scope allows everything ``other`` asks."""
        return (
            self.context == other.context
            and self.resource in ("*", other.resource)
            and other.permissions <= self.permissions
        )

    def allows(self, resource: str, permission: str) -> bool:
        return self.resource in ("*", resource) and permission in self.permissions


def resource_scope(scope: str) -> ResourceScope | None:
    """The resource scope ``scope`` names; None for anything else (a plain scope, or not a scope of ours)."""
    match = _RESOURCE_SCOPE.fullmatch(scope)
    if match is None or not match.group(3):
        return None
    if match.group(1) == SYSTEM and not set(match.group(3)) <= SYSTEM_PERMISSIONS:
        return None
    return ResourceScope(match.group(1), match.group(2), frozenset(match.group(3)))


def is_known(scope: str) -> bool:
    """A scope this server understands (others are refused, not silently dropped)."""
    return scope in PLAIN_SCOPES or resource_scope(scope) is not None


def unknown(scopes: Iterable[str]) -> list[str]:
    return [s for s in scopes if not is_known(s)]


def covered(requested: str, allowed: Iterable[str]) -> bool:
    """Whether the client's ``allowed`` scopes include ``requested`` (a resource scope may be narrower)."""
    allowed = list(allowed)
    if requested in allowed:
        return True
    wanted = resource_scope(requested)
    if wanted is None:
        return False
    return any(have.covers(wanted) for have in map(resource_scope, allowed) if have is not None)


def not_allowed(requested: Iterable[str], allowed: Iterable[str]) -> list[str]:
    """The requested scopes outside the client's allowed ones."""
    allowed = list(allowed)
    return [s for s in requested if not covered(s, allowed)]


def is_system(scope: str) -> bool:
    """A ``system/`` scope: a backend service's, never a user-facing app's (docs/smart.md#backend-services)."""
    found = resource_scope(scope)
    return found is not None and found.context == SYSTEM


def needs_patient(scopes: Iterable[str]) -> bool:
    """Whether a grant of ``scopes`` needs a patient in context: ``launch/patient``, ``launch`` (the EHR launch's
    patient) or any ``patient/`` scope."""
    return any(s in (LAUNCH_PATIENT, LAUNCH) or s.startswith("patient/") for s in scopes)


def wants_refresh(scopes: Iterable[str]) -> bool:
    return any(s in (OFFLINE, ONLINE) for s in scopes)


@dataclass(frozen=True, slots=True)
class Interaction:
    """A FHIR interaction as a scope sees it: the resource type and the permission letter it needs."""

    resource: str
    permission: str


# The FHIR router's operations whose first segment is not a resource type of its own.
_METHOD_PERMISSION = {"POST": "c", "PUT": "u", "PATCH": "u", "DELETE": "d"}


def interaction(method: str, path: str) -> Interaction | None:
    """The interaction a request under ``/fhir`` is (``path`` after ``/fhir/``): reading one resource (its
    versions, history and operations too) needs ``r``, a search ``s`` (a type-level GET operation too: ``$find``), a create ``c`` (a type's operations too:
    ``$hold``, ``$book``), an update ``u`` (an operation posted to one resource too: ``$cancel``), a delete
    ``d``. None for what needs no scope (``metadata``)."""
    parts = [p for p in path.split("/") if p]
    if not parts or parts[0] == "metadata" or parts[0].startswith((".", "$")):
        return None
    resource = parts[0]
    method = method.upper()
    if method in ("GET", "HEAD"):
        # A type's own search or a type-level operation read with GET (``Appointment/$find``: the free times) is a
        # search; one resource, its history and its operations are a read.
        searching = len(parts) == 1 or (len(parts) == 2 and parts[1].startswith("$"))
        return Interaction(resource, "s" if searching else "r")
    if method == "POST" and len(parts) >= 3 and parts[-1].startswith("$"):
        # An operation on one existing resource (``Appointment/7/$cancel``) changes it: an update.
        return Interaction(resource, "u")
    return Interaction(resource, _METHOD_PERMISSION.get(method, "r"))


def permits(granted: Iterable[str], wanted: Interaction) -> bool:
    """Whether any granted resource scope allows ``wanted``."""
    return any(
        scope.allows(wanted.resource, wanted.permission) for scope in map(resource_scope, granted) if scope is not None
    )


def patient_only(granted: Iterable[str], wanted: Interaction) -> bool:
    """Whether ``wanted`` is allowed only through ``patient/`` scopes (the launch's patient narrows what is seen)."""
    users = [s for s in map(resource_scope, granted) if s is not None and s.context != "patient"]
    return not any(s.allows(wanted.resource, wanted.permission) for s in users)


@dataclass(frozen=True, slots=True)
class Ceiling:
    """A SMART token's scopes as the ceiling of what one answer may carry beside what was asked (``_include``,
    ``_revinclude``): the ``granted`` scopes and the launch's ``patient_id`` (None: no patient in context)."""

    granted: tuple[str, ...]
    patient_id: int | None = None

    def may_read(self, resource: str) -> bool:
        """Whether a resource of type ``resource`` may be read with these scopes."""
        return permits(self.granted, Interaction(resource, "r"))

    def patient_for(self, resource: str) -> int | None:
        """The one patient whose resources of type ``resource`` may be read, when only ``patient/`` scopes allow
        reading them; None: no such narrowing."""
        if self.patient_id is None or not patient_only(self.granted, Interaction(resource, "r")):
            return None
        return self.patient_id
