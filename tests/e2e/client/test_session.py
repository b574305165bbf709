"""The SDK's session against a real server: login, logout, the headers, errors."""

from __future__ import annotations

import pytest

from doctordesk.client import Client, NotFound, NotLoggedIn, Unauthorized, ValidationError


async def test_login_gives_the_user_and_a_token_that_opens_screens(shared_server) -> None:
    async with Client(shared_server.url, realtime=False) as client:
        user = await client.login("doctor1", "demo")
        assert (user.username, user.role) == ("doctor1", "doctor")
        assert client.token
        screen = await client.open("/profile/appointments")
        assert screen.name == "appointment-list"


async def test_logout_revokes_the_token_and_closes_the_screens(shared_server) -> None:
    async with Client(shared_server.url, realtime=False) as client:
        await client.login("doctor2", "demo")
        token = client.token
        screen = await client.open("/profile/appointments")
        await client.logout()
        assert client.token is None and client.user is None and screen.closed and client.screens == ()
        with pytest.raises(NotLoggedIn):
            await client.open("/profile/appointments")
        with pytest.raises(Unauthorized) as refused:
            await client.use_token(token)
        assert refused.value.status == 401 and refused.value.code == "UNAUTHORIZED"
        assert client.token is None  # a refused token is not kept


async def test_logging_out_a_token_revoked_elsewhere_still_logs_out(shared_server) -> None:
    async with Client(shared_server.url, realtime=False) as phone, Client(shared_server.url, realtime=False) as web:
        await phone.login("doctor3", "demo")
        await web.use_token(phone.token)
        await phone.logout()
        await web.logout()  # the service says 401: the token is gone either way
        assert web.token is None


async def test_a_wrong_password_is_unauthorized(shared_server) -> None:
    async with Client(shared_server.url, realtime=False) as client:
        with pytest.raises(Unauthorized):
            await client.login("doctor3", "not-the-password")
        assert client.token is None


async def test_someone_elses_appointment_is_not_found(shared_server) -> None:
    async with Client(shared_server.url, realtime=False) as doctor1, Client(shared_server.url, realtime=False) as other:
        await doctor1.login("doctor1", "demo")
        await other.login("doctor2", "demo")
        theirs_id = (await other.request("GET", "/api/appointments"))["appointments"][0]["id"]
        with pytest.raises(NotFound) as missing:
            await doctor1.request("GET", f"/api/appointments/{theirs_id}")
        assert missing.value.status == 404


async def test_a_malformed_client_id_is_a_validation_error_on_that_header(shared_server) -> None:
    async with Client(shared_server.url, realtime=False, client_id="not an id!") as client:
        await client.login("doctor1", "demo")
        with pytest.raises(ValidationError) as refused:
            await client.open("/profile/appointments")
        assert "X-Client-Id" in refused.value.fields


async def test_push_headers_go_with_every_call_and_a_bad_platform_is_refused(shared_server) -> None:
    from doctordesk.client import PushRegistration

    phone = PushRegistration("fcm-token-1", "android", "device-1")
    async with Client(shared_server.url, realtime=False, layout="mobile", push=phone) as client:
        await client.login("doctor1", "demo")
        screen = await client.open("/profile/appointments")
        assert screen.layout == "mobile"
        client.set_push(PushRegistration("fcm-token-2", "android", "device-1"))  # the platform rotated the token
        await screen.poll()
        client.set_push(PushRegistration("x", "windows", "device-1"))  # type: ignore[arg-type]
        with pytest.raises(ValidationError) as refused:
            await screen.poll()
        assert "X-Push-Platform" in refused.value.fields


async def test_the_sdk_gets_screens_and_errors_in_the_language_it_asks_for_or_the_stored_one(shared_server) -> None:
    async with Client(shared_server.url, realtime=False, language="de") as client:
        await client.login("support2", "demo")
        screen = await client.open("/profile/appointments")
        labels = " ".join(str(e.get("label")) for e in screen.walk())
        assert "Wartet auf die Entscheidung des Arztes" in labels and "Awaiting" not in labels
        with pytest.raises(ValidationError) as refused:
            await client.request("PUT", "/profile/language", data={"language": "fr"})
        assert refused.value.code == "FIELDS_VALIDATION_ERROR" and refused.value.fields["language"].startswith("Eines")
    async with Client(shared_server.url, realtime=False) as english:
        user = await english.login("support2", "demo")
        assert user.language is None
        await english.set_language("de")
        assert english.user is not None and english.user.language == "de"
        with pytest.raises(ValidationError) as refused:
            await english.request("PUT", "/profile/language", data={"language": "xx"})
        assert refused.value.fields["language"] == "Eines von: en, de."
        await english.set_language("en")
