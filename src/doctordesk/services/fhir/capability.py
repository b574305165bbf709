"""The CapabilityStatement of the FHIR interface: exactly the resources, interactions and search parameters the
router serves (a test compares it with the routes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.services.fhir import appointments as fhir_appointments
from doctordesk.services.fhir import audit_events as fhir_audit
from doctordesk.services.fhir import chains
from doctordesk.services.fhir import chat as fhir_chat
from doctordesk.services.fhir import deliveries as fhir_deliveries
from doctordesk.services.fhir import directory as fhir_directory
from doctordesk.services.fhir import people as fhir_people
from doctordesk.services.fhir import slots as fhir_slots
from doctordesk.services.fhir import subscriptions as fhir_subscriptions
from doctordesk.services.smart.capability import rest_security

SEARCH_TYPES = {
    "_id": "token",
    "_lastUpdated": "date",
    "name": "string",
    "family": "string",
    "given": "string",
    "birthdate": "date",
    "service-type": "token",
    "date": "date",
    "status": "token",
    "identifier": "token",
    "practitioner": "reference",
    "patient": "reference",
    "location": "reference",
    "appointment": "reference",
    "actor": "reference",
    "schedule": "reference",
    "start": "date",
    "entity": "reference",
    "subtype": "token",
    "about": "reference",
}
_READ_SEARCH = ("read", "search-type")
# The operations on Appointment after Argonaut Scheduling's patient-based flow (docs/fhir.md#scheduling); their
# definitions are this interface's own (its parameters and answers differ in detail from the IG's).
# ``cancel``: the integration API's cancel (docs/fhir.md#cancel).
OPERATIONS = {
    name: f"urn:doctordesk:fhir:OperationDefinition/Appointment-{name}" for name in ("find", "hold", "book", "cancel")
}

# Bulk Data Access 2.0 (docs/fhir.md#bulk-export): the system-level operation and those on Patient and Group.
BULK_DATA = "http://hl7.org/fhir/uv/bulkdata"
BULK_OPERATIONS = {
    None: f"{BULK_DATA}/OperationDefinition/export",
    "Patient": f"{BULK_DATA}/OperationDefinition/patient-export",
    "Group": f"{BULK_DATA}/OperationDefinition/group-export",
}

# resource type → (interactions, search parameters, conditional create)
SUPPORTED: dict[str, tuple[tuple[str, ...], tuple[str, ...], bool]] = {
    "Appointment": (
        ("read", "vread", "history-instance", "search-type", "create"),
        fhir_appointments.SEARCH_PARAMETERS,
        True,
    ),
    "AppointmentResponse": (("read", "search-type", "create"), ("appointment", "actor"), False),
    "Practitioner": (_READ_SEARCH, fhir_people.PRACTITIONER_PARAMETERS, False),
    "PractitionerRole": (_READ_SEARCH, ("practitioner", "location"), False),
    "Location": (_READ_SEARCH, fhir_directory.LOCATION_PARAMETERS, False),
    "Patient": (_READ_SEARCH, fhir_people.PATIENT_PARAMETERS, False),
    "Schedule": (_READ_SEARCH, ("actor",), False),
    "Slot": (_READ_SEARCH, fhir_slots.SEARCH_PARAMETERS, False),
    "AuditEvent": (_READ_SEARCH, fhir_audit.SEARCH_PARAMETERS, False),
    "Communication": (_READ_SEARCH, fhir_chat.SEARCH_PARAMETERS, False),
    "Binary": (("read",), (), False),
    "Group": (_READ_SEARCH, ("_id",), False),
    "Subscription": (
        ("read", "search-type", "create", "update", "delete"),
        fhir_subscriptions.SEARCH_PARAMETERS,
        False,
    ),
}

# The ``_sort`` keys each search offers (``-`` for descending, several comma-separated), listed on the resource
# as this interface's extension: R4's CapabilityStatement has no element for them.
SORT_EXTENSION = "urn:doctordesk:fhir:sort"
SORTS: dict[str, tuple[str, ...]] = {
    "Appointment": fhir_appointments.SORTS,
    "Patient": fhir_people.PATIENT_SORTS,
    "Practitioner": fhir_people.PRACTITIONER_SORTS,
    "Slot": fhir_slots.SORTS,
    "Location": fhir_directory.LOCATION_SORTS,
    "AuditEvent": fhir_audit.SORTS,
}
# Patient's ``$everything`` (docs/fhir.md#everything): the core operation, as R4 defines it (GET; ``_since``,
# ``_type``, ``_count``).
EVERYTHING = "http://hl7.org/fhir/OperationDefinition/Patient-everything"


def _search_param(kind: str, name: str) -> dict[str, Any]:
    """One search parameter; a reference that takes chains names them in its documentation (R4 has no element
    for the chains a server supports but the SearchParameter's, which this server does not serve)."""
    param: dict[str, Any] = {"name": name, "type": SEARCH_TYPES[name]}
    chained = chains.chains_of(name) if kind == "Appointment" else []
    if chained:
        param["documentation"] = CHAIN_DOCUMENTATION + ", ".join(f"{name}.{c}" for c in chained)
    return param


WAITLIST_DOCUMENTATION = (
    "Waitlist entries read as Appointments with status waitlist (Appointment/waitlist-{id}). A search lists them "
    "only when it asks for status=waitlist alone, with patient, practitioner and location (paged in order of "
    "waiting; other parameters are ignored with a warning); every other search lists appointments only."
)
CHAIN_DOCUMENTATION = "Chains (one level; the target's modifiers; typed form too): "


def capability_statement(base_url: str, *, software_version: str, published: datetime) -> dict[str, Any]:
    resources = []
    for kind, (interactions, params, conditional) in SUPPORTED.items():
        entry: dict[str, Any] = {}
        if kind in SORTS:
            entry["extension"] = [{"url": SORT_EXTENSION, "valueString": key} for key in SORTS[kind]]
        entry |= {
            "type": kind,
            "interaction": [{"code": code} for code in interactions],
            "versioning": "versioned" if kind.startswith("Appointment") else "no-version",
            "readHistory": kind == "Appointment",
            "updateCreate": False,
            "conditionalCreate": conditional,
        }
        if kind == "Appointment":
            entry["documentation"] = WAITLIST_DOCUMENTATION
            entry["searchInclude"] = list(fhir_appointments.INCLUDES)
            entry["searchRevInclude"] = list(fhir_appointments.REVINCLUDES)
        if kind == "Subscription":
            entry["operation"] = [{"name": "deliveries", "definition": fhir_deliveries.OPERATION}]
        if kind == "Appointment":
            entry["operation"] = [{"name": name, "definition": url} for name, url in OPERATIONS.items()]
        if kind in BULK_OPERATIONS:
            entry["operation"] = [{"name": "export", "definition": BULK_OPERATIONS[kind]}]
        if kind == "Patient":  # beside any other operation on Patient
            entry["operation"] = [*entry.get("operation", []), {"name": "everything", "definition": EVERYTHING}]
        if params:
            entry["searchParam"] = [_search_param(kind, name) for name in params]
        resources.append(entry)
    return {
        "resourceType": "CapabilityStatement",
        "status": "active",
        "date": fhir_mapping.instant(published),
        "kind": "instance",
        "software": {"name": "doctordesk", "version": software_version},
        "implementation": {"description": "doctordesk FHIR interface", "url": base_url},
        "instantiates": [f"{BULK_DATA}/CapabilityStatement/bulk-data"],
        "fhirVersion": fhir_mapping.FHIR_VERSION,
        "format": [fhir_mapping.MEDIA_TYPE, "json"],
        "rest": [
            {
                "mode": "server",
                "security": rest_security(base_url.removesuffix("/fhir")),
                "resource": resources,
                "operation": [{"name": "export", "definition": BULK_OPERATIONS[None]}],
            }
        ],
    }
