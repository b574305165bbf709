"""What the FHIR searches do not apply they never pretend to: a chain deeper than one level (or on a parameter
that takes none) is an unknown parameter, ignored with a warning and left out of the self link, or 400 in strict
mode (SQLite and PostgreSQL). The chains offered: test_fhir_chains.py; ``_sort`` keys follow the same rule
(test_fhir_sort.py)."""

from __future__ import annotations

import pytest

from tests.support.fhir import assert_outcome, entries, resource_of
from tests.support.integration import make_key


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


async def test_a_deeper_chain_is_ignored_with_a_warning_or_refused_when_strict(client, key):
    everything = resource_of(await client.get("/fhir/Appointment?_summary=count", headers=key.headers))
    deeper = "patient.general-practitioner.name"
    chained = resource_of(await client.get(f"/fhir/Appointment?{deeper}=nobody&_summary=count", headers=key.headers))
    assert chained["total"] == everything["total"] > 0  # not applied: nothing was filtered ...
    [self_link] = [link["url"] for link in chained["link"] if link["relation"] == "self"]
    assert "general-practitioner" not in self_link  # ... and the self link does not claim it was
    [warning] = entries(chained, "outcome")
    assert warning["issue"][0]["severity"] == "warning" and deeper in warning["issue"][0]["expression"][0]
    strict_headers = {**key.headers, "Prefer": "handling=strict"}
    strict = await client.get(f"/fhir/Appointment?{deeper}=nobody", headers=strict_headers)
    assert_outcome(strict, 400, "NOT_SUPPORTED", expression=f"Appointment.{deeper}")


async def test_a_chain_on_another_resource_is_an_unknown_parameter(client, key):
    strict = {**key.headers, "Prefer": "handling=strict"}
    for url in ("/fhir/PractitionerRole?practitioner.name=berger", "/fhir/Patient?general-practitioner.name=x"):
        response = await client.get(url, headers=strict)
        assert_outcome(response, 400, "NOT_SUPPORTED")
