"""What the FHIR searches do not apply they never pretend to: a chained parameter is an unknown parameter (ignored
with a warning and left out of the self link, or 400 in strict mode; SQLite and PostgreSQL). ``_sort`` keys follow
the same rule (test_fhir_sort.py)."""

from __future__ import annotations

import pytest

from tests.support.fhir import assert_outcome, entries, resource_of
from tests.support.integration import make_key


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


async def test_a_chained_parameter_is_ignored_with_a_warning_or_refused_when_strict(client, key):
    everything = resource_of(await client.get("/fhir/Appointment?_summary=count", headers=key.headers))
    chained = resource_of(await client.get("/fhir/Appointment?patient.name=nobody&_summary=count", headers=key.headers))
    assert chained["total"] == everything["total"] > 0  # not applied: nothing was filtered ...
    [self_link] = [link["url"] for link in chained["link"] if link["relation"] == "self"]
    assert "patient.name" not in self_link  # ... and the self link does not claim it was
    [warning] = entries(chained, "outcome")
    assert warning["issue"][0]["severity"] == "warning" and "patient.name" in warning["issue"][0]["expression"][0]
    strict = await client.get(
        "/fhir/Appointment?patient.name=nobody", headers={**key.headers, "Prefer": "handling=strict"}
    )
    assert_outcome(strict, 400, "NOT_SUPPORTED", expression="Appointment.patient.name")
