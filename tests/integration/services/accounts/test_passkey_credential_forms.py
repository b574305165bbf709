"""A passkey's credential comes as the browser's ``PublicKeyCredential.toJSON()`` gives it, a JSON object, or as
that object written as a JSON string (older clients): both add a passkey, sign in and re-authenticate; a credential
that is neither gets one whole message naming ``credential`` and writes nothing (SQLite and PostgreSQL)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from doctordesk.store.mfa_tables import Passkey
from tests.support.errors import assert_error
from tests.support.passkey_authenticator import SoftPasskey

ORIGIN = "http://testserver"
NOT_A_PASSKEY = "Not a passkey response: send the credential's toJSON() object (or that object as a JSON string)."


async def _passkeys(runtime) -> int:
    async with runtime.db.read() as session:
        return int(await session.scalar(select(func.count()).select_from(Passkey)) or 0)


@pytest.mark.parametrize("as_object", [True, False], ids=["object", "string"])
async def test_a_passkey_is_added_and_signs_in_with_the_credential_as_an_object_or_a_string(
    client, login, runtime, as_object
):
    doctor = await login("doctor1")
    passkey = SoftPasskey(ORIGIN)

    def form(text: str) -> object:
        return json.loads(text) if as_object else text

    options = (await client.post("/auth/passkeys/options", headers=doctor.headers)).json()
    body = {"ticket": options["ticket"], "credential": form(passkey.create(options["publicKey"]))}
    added = await client.post("/auth/passkeys", json=body, headers=doctor.headers)
    assert added.status_code == 200, added.text
    challenge = (await client.post("/auth/passkey/options")).json()
    answer = {"ticket": challenge["ticket"], "credential": form(passkey.get(challenge["publicKey"]))}
    signed_in = await client.post("/auth/passkey/login", json=answer)
    assert signed_in.status_code == 200, signed_in.text
    challenge = (await client.post("/auth/passkey/options")).json()
    again = {"ticket": challenge["ticket"], "credential": form(passkey.get(challenge["publicKey"]))}
    confirmed = await client.post("/auth/reauthenticate/passkey", json=again, headers=doctor.headers)
    assert confirmed.status_code == 204, confirmed.text


@pytest.mark.parametrize(
    "credential",
    [{"rawId": "x"}, [1, 2], 7, "not json", "[]", {"id": "x" * 20_000}, None, True],
    ids=["object-without-id", "list", "number", "text", "json-list", "too-large", "null", "bool"],
)
async def test_a_credential_that_is_no_passkey_response_gets_one_whole_message_and_adds_nothing(
    client, login, runtime, credential
):
    doctor = await login("doctor1")
    options = (await client.post("/auth/passkeys/options", headers=doctor.headers)).json()
    before = await _passkeys(runtime)
    refused = await client.post(
        "/auth/passkeys", json={"ticket": options["ticket"], "credential": credential}, headers=doctor.headers
    )
    body = assert_error(refused, 422, "FIELDS_VALIDATION_ERROR")
    assert body["fields"] == {"credential": NOT_A_PASSKEY}
    assert await _passkeys(runtime) == before


@pytest.mark.parametrize("name", ["\u2800", "\u200d", "\u200c\u200d"], ids=["braille-blank", "joiner", "joiners"])
async def test_a_passkey_name_that_shows_nothing_is_refused_by_the_api_as_on_the_security_page(
    client, login, runtime, name
):
    doctor = await login("doctor1")
    options = (await client.post("/auth/passkeys/options", headers=doctor.headers)).json()
    credential = json.loads(SoftPasskey(ORIGIN).create(options["publicKey"]))
    before = await _passkeys(runtime)
    body = {"ticket": options["ticket"], "credential": credential, "name": name}
    refused = await client.post("/auth/passkeys", json=body, headers=doctor.headers)
    assert set(assert_error(refused, 422, "FIELDS_VALIDATION_ERROR")["fields"]) == {"name"}
    assert await _passkeys(runtime) == before
