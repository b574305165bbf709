"""``_sort`` on the FHIR searches (docs/fhir.md#sorting): every key offered, ``-`` for descending, several keys,
ties broken by id, pages that follow the sort without repeating or skipping a row; a key not offered is ignored
with a warning and left out of the self link, or 400 with ``Prefer: handling=strict`` (SQLite and PostgreSQL)."""

from __future__ import annotations

import unicodedata
from datetime import date, datetime
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import insert

from doctordesk.domain.fhir import names as fhir_names
from doctordesk.services.fhir import appointments as fhir_appointments
from doctordesk.services.fhir import people as fhir_people
from doctordesk.store import name_words
from doctordesk.store.tables import Patient
from tests.support.fhir import assert_outcome, entries, next_link, resource_of
from tests.support.integration import make_key


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


async def walk(client, headers, url):
    """Every match of a search, page by page through its next links, and the first page."""
    first = resource_of(await client.get(url, headers=headers))
    found, page = entries(first), first
    while (link := next_link(page)) is not None:
        page = resource_of(await client.get(link.removeprefix("http://testserver"), headers=headers))
        found.extend(entries(page))
    return found, first


def self_query(bundle):
    [url] = [link["url"] for link in bundle["link"] if link["relation"] == "self"]
    return parse_qs(urlsplit(url).query)


def ordered(keys, descending):
    """Whether ``keys`` (tuples) follow an order where each position is ascending or descending."""
    for a, b in zip(keys, keys[1:], strict=False):
        for x, y, down in zip(a, b, descending, strict=True):
            if x != y:
                assert (x > y) if down else (x < y), (a, b)
                break
        else:
            raise AssertionError(f"two rows with the same keys: {a}")
    return True


def instant(text):
    return datetime.fromisoformat(text)


@pytest.mark.parametrize(
    ("sort", "key_of", "descending"),
    [
        ("status,-date", lambda r: (r["status"], instant(r["start"]), int(r["id"])), (False, True, True)),
        ("-status,date", lambda r: (r["status"], instant(r["start"]), int(r["id"])), (True, False, False)),
        ("-_id", lambda r: (int(r["id"]),), (True,)),
        ("_lastUpdated", lambda r: (instant(r["meta"]["lastUpdated"]), int(r["id"])), (False, False)),
        ("-_lastUpdated,_id", lambda r: (instant(r["meta"]["lastUpdated"]), int(r["id"])), (True, False)),
        ("date", lambda r: (instant(r["start"]), int(r["id"])), (False, False)),
    ],
)
async def test_appointments_sort_by_every_key_and_pages_follow_the_sort(client, key, demo, sort, key_of, descending):
    everything, _ = await walk(client, key.headers, "/fhir/Appointment?_count=200")
    found, first = await walk(client, key.headers, f"/fhir/Appointment?_sort={sort}&_count=4")
    assert len(everything) > 8
    assert sorted(r["id"] for r in found) == sorted(r["id"] for r in everything)  # no row repeated or skipped
    assert ordered([key_of(r) for r in found], descending)
    assert self_query(first)["_sort"] == [sort]
    assert f"_sort={sort.replace(',', '%2C')}" in next_link(first)


async def test_sort_and_filter_together_and_the_total_is_the_filters(client, key, demo):
    url = "/fhir/Appointment?status:not=cancelled&_sort=-status,_id&_count=3&_total=accurate"
    found, first = await walk(client, key.headers, url)
    assert first["total"] == len(found) > 3
    assert "cancelled" not in {r["status"] for r in found}
    assert ordered([(r["status"], int(r["id"])) for r in found], (True, False))


def folded(text):
    return unicodedata.normalize("NFC", text).casefold()


@pytest.mark.parametrize(
    ("sort", "key_of", "descending"),
    [
        ("family", lambda p: (folded(p.family), p.id), (False, False)),
        ("-given", lambda p: (folded(p.given), p.id), (True, True)),
        ("name,-_id", lambda p: (folded(p.family), folded(p.given), p.id), (False, False, True)),
        ("-birthdate,family", lambda p: (p.born, folded(p.family), p.id), (True, False, False)),
        ("-_id", lambda p: (p.id,), (True,)),
    ],
)
async def test_patients_sort_by_name_parts_and_birth_date(client, key, demo, runtime, sort, key_of, descending):
    async with runtime.db.transaction() as s:  # ties on the family name, a missing birth date
        s.add_all([Patient(name="Anna Zett", birth_date=date(1990, 5, 1)), Patient(name="Bert Zett")])
    found, first = await walk(client, key.headers, f"/fhir/Patient?_sort={sort}&_count=3")
    everything, _ = await walk(client, key.headers, "/fhir/Patient?_count=200")
    assert len(found) == len(everything) > 6 and len({p["id"] for p in found}) == len(found)

    class Row:
        def __init__(self, r):
            self.id = int(r["id"])
            self.family, given = fhir_names.parts(r["name"][0]["text"])
            self.given = " ".join(given)
            born = r.get("birthDate")
            # a missing birth date sorts after every date (first when descending)
            self.born = date.fromisoformat(born) if born else date.max

    assert ordered([key_of(Row(r)) for r in found], descending)
    assert self_query(first)["_sort"] == [sort]


async def test_practitioners_and_slots_sort_descending(client, key, demo):
    doctors, _ = await walk(client, key.headers, "/fhir/Practitioner?_sort=-name&_count=1")
    families = [fhir_names.parts(d["name"][0]["text"])[0].casefold() for d in doctors]
    assert len(doctors) == 3 and families == sorted(families, reverse=True)
    d1, berlin = demo.users["doctor1"], demo.locations["berlin"]
    span = "start=ge2026-11-23T00:00:00%2B01:00&start=lt2026-11-25T00:00:00%2B01:00"
    base = f"/fhir/Slot?schedule=Schedule/{d1}-{berlin}&{span}"
    up, _ = await walk(client, key.headers, f"{base}&_count=200")
    down, _ = await walk(client, key.headers, f"{base}&_sort=-start&_count=5")
    assert len(up) > 5 and [s["id"] for s in down] == [s["id"] for s in reversed(up)]


async def test_a_sort_key_not_offered_is_ignored_with_a_warning_or_refused_when_strict(client, key, demo):
    mixed = resource_of(await client.get("/fhir/Appointment?_sort=-foo,date,service-type", headers=key.headers))
    assert self_query(mixed)["_sort"] == ["date"]  # only what was applied
    warnings = entries(mixed, "outcome")[0]["issue"]
    assert [i["expression"] for i in warnings] == [["_sort"], ["_sort"]]
    assert "'-foo'" in warnings[0]["details"]["text"] and "'service-type'" in warnings[1]["details"]["text"]
    starts = [instant(r["start"]) for r in entries(mixed)]
    assert starts == sorted(starts)
    none_applied = resource_of(await client.get("/fhir/Schedule?_sort=name", headers=key.headers))
    assert "_sort" not in self_query(none_applied)
    assert entries(none_applied, "outcome")[0]["issue"][0]["expression"] == ["_sort"]
    strict = {**key.headers, "Prefer": "handling=strict"}
    for kind, sort in (("Appointment", "date,foo"), ("Patient", "-_lastUpdated"), ("Slot", "status")):
        response = await client.get(f"/fhir/{kind}?_sort={sort}", headers=strict)
        assert_outcome(response, 400, "NOT_SUPPORTED", expression=f"{kind}._sort")


async def test_a_page_link_of_one_sort_is_refused_under_another(client, key, demo):
    first = resource_of(await client.get("/fhir/Appointment?_sort=status&_count=2", headers=key.headers))
    cursor = parse_qs(urlsplit(next_link(first)).query)["_cursor"][0]
    response = await client.get(f"/fhir/Appointment?_sort=-status&_count=2&_cursor={cursor}", headers=key.headers)
    assert_outcome(response, 400, "FIELDS_VALIDATION_ERROR", expression="Appointment._cursor")
    tampered = cursor[:-2] + ("AA" if cursor[-2:] != "AA" else "BB")
    response = await client.get(f"/fhir/Appointment?_sort=status&_count=2&_cursor={tampered}", headers=key.headers)
    assert_outcome(response, 400, "FIELDS_VALIDATION_ERROR", expression="Appointment._cursor")


async def test_the_capability_statement_lists_the_sorts_each_search_offers(client):
    statement = resource_of(await client.get("/fhir/metadata"))
    offered = {
        r["type"]: [e["valueString"] for e in r.get("extension", []) if e["url"] == "urn:doctordesk:fhir:sort"]
        for r in statement["rest"][0]["resource"]
    }
    assert offered["Appointment"] == ["_id", "_lastUpdated", "date", "status"]
    assert offered["Patient"] == ["_id", "name", "family", "given", "birthdate"]
    assert offered["Practitioner"] == ["_id", "name"] and offered["Slot"] == ["start"]
    assert offered["Location"] == ["_id", "name"] and offered["AuditEvent"] == ["date"]
    assert offered["Communication"] == [] and offered["Schedule"] == []


async def test_every_listed_date_and_string_parameter_is_a_sort_key_offered(client):
    statement = resource_of(await client.get("/fhir/metadata"))
    for r in statement["rest"][0]["resource"]:
        offered = {e["valueString"] for e in r.get("extension", []) if e["url"] == "urn:doctordesk:fhir:sort"}
        sortable = {p["name"] for p in r.get("searchParam", []) if p["type"] in ("date", "string")}
        assert sortable <= offered, r["type"]


@pytest.mark.parametrize("small_set", [0, 4, 10_000])
async def test_a_filtered_search_pages_the_same_whichever_way_its_rows_are_read(
    client, key, demo, monkeypatch, small_set
):
    """On SQLite a search by ``_lastUpdated`` or ``status`` first reads the ids that match, up to ``SMALL_SET``
    (docs/fhir.md#search-performance): more matches than that, fewer, or the page's own size between, the pages
    hold the same rows in the same order."""
    monkeypatch.setattr(fhir_appointments, "SMALL_SET", small_set)
    everything, _ = await walk(client, key.headers, "/fhir/Appointment?_count=200")

    def by_date(rows, reverse=False):
        return [r["id"] for r in sorted(rows, key=lambda r: (instant(r["start"]), int(r["id"])), reverse=reverse)]

    not_fulfilled = [r for r in everything if r["status"] != "fulfilled"]
    booked_or_cancelled = [r for r in everything if r["status"] in ("booked", "cancelled")]
    cases = [
        ("status:not=fulfilled&_count=3", by_date(not_fulfilled)),
        ("_lastUpdated=ge2000-01-01&_sort=-date&_count=3", by_date(everything, reverse=True)),
        ("status=booked,cancelled&_count=2", by_date(booked_or_cancelled)),
        ("_lastUpdated=ge2100-01-01", []),
    ]
    for query, expected in cases:
        found, _ = await walk(client, key.headers, f"/fhir/Appointment?{query}")
        assert [r["id"] for r in found] == expected, query
    assert len(not_fulfilled) > 4 and len(booked_or_cancelled) > 4 and len(everything) > 8


@pytest.mark.parametrize("batch", [3, 200])
async def test_a_sorted_patient_search_pages_in_the_database_with_the_name_filter_applied(
    client, key, demo, runtime, monkeypatch, batch
):
    """The sort keys are columns (the name's parts folded, in code point order on both databases): pages of two
    follow ``-family,given`` and then ``birthdate`` over every match and only the matches, whether the rows are read
    in batches smaller than a page's matches (the name filter dropping rows between them) or in one."""
    monkeypatch.setattr(fhir_people, "_BATCH", batch)
    names = [
        ("Oskar Kreis", date(1971, 1, 1)), ("anna kreis", None), ("Émile Kreisel", date(1980, 2, 2)),
        ("Zoe Ärger-Kreis", date(1960, 3, 3)), ("Ida Kreis", date(1971, 1, 1)), ("Kreis Müller", None),
        ("Bea Ohnekreis", date(1999, 9, 9)), ("Dr. Kai Kreis", date(1950, 5, 5)), ("Ömer Kreis", None),
    ]  # fmt: skip
    async with runtime.db.transaction() as s:
        s.add_all([Patient(name=n, birth_date=b) for n, b in names])
    everything, _ = await walk(client, key.headers, "/fhir/Patient?_count=200")
    matching = [p for p in everything if fhir_names.part_matches(p["name"][0]["text"], "name", "Kreis", exact=False)]

    def keys(p):
        family, given = fhir_names.parts(p["name"][0]["text"])
        return folded(family), folded(" ".join(given)), int(p["id"])

    expected = sorted(matching, key=lambda p: (keys(p)[1], keys(p)[2]))
    expected = sorted(expected, key=lambda p: keys(p)[0], reverse=True)  # -family, then given, then id
    found, first = await walk(client, key.headers, "/fhir/Patient?name=Kreis&_sort=-family,given&_count=2")
    assert [p["id"] for p in found] == [p["id"] for p in expected]
    assert len(found) == 8 and self_query(first)["_sort"] == ["-family,given"]  # not "Bea Ohnekreis"

    by_birth, _ = await walk(client, key.headers, "/fhir/Patient?name=Kreis&_sort=birthdate&_count=2")
    born = [(p.get("birthDate") or "9999-12-31", int(p["id"])) for p in by_birth]
    assert born == sorted(born) and len(by_birth) == 8 and born[-1][0] == "9999-12-31"


async def test_the_sort_keys_follow_a_rename_and_a_bulk_write(client, key, demo, runtime):
    """The sort keys are written with the name: by the ORM on a rename, by ``name_words.sync`` after a bulk insert
    that bypasses it (the import's way)."""
    async with runtime.db.transaction() as s:
        renamed = Patient(name="Zora Zzzzzz")
        s.add(renamed)
    async with runtime.db.transaction() as s:
        row = await s.get(Patient, renamed.id)
        assert row is not None
        row.name = "Zora Aaaa"  # from last to first
    async with runtime.db.transaction() as s:
        [bulk] = (await s.scalars(insert(Patient).returning(Patient.id), [{"name": "Olga Zzzzzzz"}])).all()
        await name_words.sync(s, [bulk])
    found, _ = await walk(client, key.headers, "/fhir/Patient?_sort=family&_count=3")
    families = [fhir_names.parts(p["name"][0]["text"])[0] for p in found]
    assert found[0]["id"] == str(renamed.id) and found[-1]["id"] == str(bulk)  # without its keys: first
    assert [f.casefold() for f in families] == sorted(f.casefold() for f in families)
