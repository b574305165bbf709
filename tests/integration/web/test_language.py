"""English and German over HTTP: the page, its patches, errors, the shell's texts and pushes follow the reader's
language (Accept-Language, or the stored choice that wins over it); the language is part of the state token, so a
German client is never answered with an English patch (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from doctordesk.screens.protocol import apply, walk
from doctordesk.store.realtime_tables import PushOutbox
from doctordesk.store.tables import User
from tests.support.review import REQUESTED, aid

GERMAN = {"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"}
ENGLISH = {"Accept-Language": "en-GB,en;q=0.9"}
PHONE = {"X-Device-Id": "phone-de", "X-Push-Platform": "android", "X-Push-Token": "tok-de"}


def approve_path(demo: Any) -> str:
    return f"/profile/appointments/{aid(demo, REQUESTED)}/approve"


def by_id(elements: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in walk(elements)}


async def test_the_review_page_is_german_for_a_german_browser_and_english_otherwise(client, login, demo) -> None:
    doctor = await login("doctor1")
    german = await client.put(approve_path(demo), headers={**doctor.headers, **GERMAN})
    assert german.status_code == 200 and german.headers["content-language"] == "de"
    page = by_id(german.json()["elements"])
    assert page["title"]["value"] == "Prüfen und zusagen"
    assert page["approve"]["label"] == "Zusagen" and page["decline"]["label"] == "Ablehnen"
    # Dates in the clinic's German format (Wed 25 Nov 09:00 in Berlin).
    assert page["requested-time"]["value"] == "Mi., 25. Nov. 2026, 09:00 MEZ"
    assert page["status"]["value"] == "Angefragt"
    english = by_id((await client.put(approve_path(demo), headers={**doctor.headers, **ENGLISH})).json()["elements"])
    assert english["approve"]["label"] == "Approve"
    assert english["requested-time"]["value"] == "Wed 25 Nov 2026, 09:00 CET"


async def test_a_poll_in_another_language_patches_the_page_into_that_language(client, login, demo) -> None:
    doctor = await login("doctor1")
    first = (await client.put(approve_path(demo), headers={**doctor.headers, **ENGLISH})).json()
    token = first["state"]
    # The same language and nothing changed: the cheap empty answer.
    same = await client.patch(approve_path(demo), headers={**doctor.headers, **ENGLISH, "X-Screen-State": token})
    assert same.json()["patches"] == []
    # The client now reads German: its English token does not pass as unchanged; the patches make it German.
    switched = await client.patch(approve_path(demo), headers={**doctor.headers, **GERMAN, "X-Screen-State": token})
    update = switched.json()
    assert update["patches"] and update["state"] != token
    patched = apply(first["elements"], update["patches"])
    fresh = (await client.put(approve_path(demo), headers={**doctor.headers, **GERMAN})).json()
    assert patched == fresh["elements"]
    assert by_id(patched)["approve"]["label"] == "Zusagen"


async def test_an_action_in_german_answers_with_german_patches(client, login, demo) -> None:
    doctor = await login("doctor1")
    page = (await client.put(approve_path(demo), headers={**doctor.headers, **GERMAN})).json()
    added = await client.patch(
        approve_path(demo) + "/add-alternative", headers={**doctor.headers, **GERMAN, "X-Screen-State": page["state"]}
    )
    assert added.status_code == 200, added.text
    patched = by_id(apply(page["elements"], added.json()["patches"]))
    new_cards = [patched["alternative-1"]]
    assert new_cards[0]["label"] == "Alternative 1"  # a word German shares, without the feature's name
    added_text = str(added.json()["patches"])
    assert "Terminvorschlag" not in added_text and "Suggested Scheduling" not in added_text
    labels = {e.get("label") for e in walk(new_cards)} - {None}
    assert {"Arzt", "Standort", "Datum", "Uhrzeit (Europe/Berlin)"} <= labels
    assert not labels & {"Doctor", "Location", "Date", "Time (Europe/Berlin)"}


async def test_errors_are_in_the_readers_language_and_keep_the_specs_code(client, login, demo) -> None:
    doctor = await login("doctor1")
    page = (await client.put(approve_path(demo), headers={**doctor.headers, **GERMAN})).json()
    version = by_id(page["elements"])["version"]["value"]
    decline = f"/profile/appointments/{aid(demo, REQUESTED)}/decline"
    refused = await client.post(decline, data={"version": version}, headers={**doctor.headers, **GERMAN})
    body = refused.json()
    assert refused.status_code == 422 and body["code"] == "FIELDS_VALIDATION_ERROR"
    assert body["message"] == "Zum Ablehnen ist eine Begründung nötig."
    assert body["fields"]["reason"] == "Geben Sie eine Begründung ein."
    english = (await client.post(decline, data={"version": version}, headers={**doctor.headers, **ENGLISH})).json()
    assert english["code"] == body["code"] and english["fields"]["reason"] == "Enter a reason."
    anonymous = await client.get("/auth/me", headers=GERMAN)
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "UNAUTHORIZED"
    assert anonymous.json()["message"] == "Ein gültiges Zugriffstoken ist erforderlich."


async def test_the_stored_choice_wins_over_the_browser_and_reaches_every_request(client, login, demo, runtime) -> None:
    doctor = await login("doctor1")
    assert doctor.user["language"] is None
    chosen = await client.put("/profile/language", data={"language": "de"}, headers={**doctor.headers, **ENGLISH})
    assert chosen.status_code == 200 and chosen.json() == {"language": "de"}
    me = await client.get("/auth/me", headers={**doctor.headers, **ENGLISH})
    assert me.json()["language"] == "de" and me.headers["content-language"] == "de"
    page = by_id((await client.put(approve_path(demo), headers={**doctor.headers, **ENGLISH})).json()["elements"])
    assert page["approve"]["label"] == "Zusagen"
    # Another sign-in (another device) gets it too.
    again = await login("doctor1")
    assert again.user["language"] == "de"


async def test_an_unknown_language_is_refused_and_writes_nothing(client, login, demo, runtime) -> None:
    doctor = await login("doctor1")
    refused = await client.put("/profile/language", data={"language": "fr"}, headers=doctor.headers)
    assert refused.status_code == 422 and "language" in refused.json()["fields"]
    assert (await client.put("/profile/language", data={"language": "de"})).status_code == 401
    async with runtime.db.read() as session:
        assert await session.scalar(select(User.language).where(User.id == doctor.user["id"])) is None


async def test_the_shell_texts_come_in_the_requested_language(client) -> None:
    german = (await client.get("/i18n/texts", headers=GERMAN)).json()
    assert german["language"] == "de"
    assert german["texts"]["Sign in"] == "Anmelden" and german["texts"]["Log out"] == "Abmelden"
    assert [lang["code"] for lang in german["languages"]] == ["en", "de"]
    english = (await client.get("/i18n/texts")).json()
    assert english["language"] == "en" and english["texts"]["Sign in"] == "Sign in"


async def test_a_push_is_written_in_the_recipients_language(client, login, demo, runtime) -> None:
    doctor, support = await login("doctor1"), await login("support1")
    await client.put("/profile/language", data={"language": "de"}, headers=doctor.headers)
    await client.put("/profile/appointments", headers={**doctor.headers, **PHONE})
    # Support writes in English; the doctor's phone is told in German.
    sent = await client.post(
        "/profile/messages/send-message",
        data={"appointment-id": str(aid(demo, REQUESTED)), "content": "Please call the patient."},
        headers={**support.headers, **ENGLISH},
    )
    assert sent.status_code == 200, sent.text
    async with runtime.db.read() as session:
        texts = (await session.scalars(select(PushOutbox.text).where(PushOutbox.user_id == doctor.user["id"]))).all()
    assert texts == [f"Neue Nachricht von {support.user['display_name']} zu Termin Nr. {aid(demo, REQUESTED)}"]


async def test_a_choice_made_on_another_instance_reaches_this_ones_cached_sign_in(client, login, demo, runtime) -> None:
    from sqlalchemy import update

    from doctordesk.domain.events import DomainEvent
    from doctordesk.services.accounts import auth

    doctor = await login("doctor1")
    assert (await auth.authenticate(runtime, doctor.token)).language is None  # now cached here
    # Another instance stores the choice and publishes the event; this one hears it on the bus.
    async with runtime.db.transaction() as session:
        await session.execute(update(User).where(User.id == doctor.user["id"]).values(language="de"))
    assert (await auth.authenticate(runtime, doctor.token)).language is None  # still the cached actor
    await auth.on_event(runtime, DomainEvent(auth.LANGUAGE_CHOSEN, (), {"user_id": doctor.user["id"]}))
    assert (await auth.authenticate(runtime, doctor.token)).language == "de"
