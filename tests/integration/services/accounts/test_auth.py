"""Accounts: log in, tokens (expiry, revocation), throttling of failed logins, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from doctordesk.services.accounts.auth import token_hash
from doctordesk.store.tables import AccessToken, AuditLog, LoginThrottle
from tests.support.errors import assert_error


async def test_login_answers_a_bearer_token_its_lifetime_and_the_user(client, demo, runtime):
    response = await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"access_token", "token_type", "expires_in", "user"}
    assert body["token_type"] == "bearer"
    assert body["expires_in"] == runtime.settings.token_ttl_seconds
    assert body["user"] == {
        "id": demo.users["doctor1"],
        "username": "doctor1",
        "role": "doctor",
        "display_name": "Dr. Anna Berger",
        "language": None,  # no stored choice: Accept-Language decides
    }
    assert len(body["access_token"]) >= 40


async def test_tokens_are_stored_hashed_never_in_clear(client, demo, runtime):
    token = (await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})).json()["access_token"]
    async with runtime.db.read() as session:
        stored = list(await session.scalars(select(AccessToken.token_hash)))
    assert stored == [token_hash(token)] and token not in stored


async def test_login_is_case_insensitive_on_the_username(client, demo):
    response = await client.post("/auth/login", data={"username": " Doctor1 ", "password": "demo"})
    assert response.status_code == 200


@pytest.mark.parametrize(("username", "password"), [("doctor1", "wrong"), ("nobody", "demo"), ("doctor1", "DEMO")])
async def test_a_wrong_password_or_unknown_user_is_401_with_the_error_shape(client, demo, username, password):
    response = await client.post("/auth/login", data={"username": username, "password": password})
    body = assert_error(response, 401, "UNAUTHORIZED")
    assert body["message"] == "Wrong username or password."
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("data", [{}, {"username": "doctor1"}, {"password": "demo"}, {"username": "", "password": ""}])
async def test_missing_login_fields_are_a_validation_error_naming_the_fields(client, demo, data):
    body = assert_error(await client.post("/auth/login", data=data), 422, "FIELDS_VALIDATION_ERROR")
    assert set(body["fields"]) <= {"username", "password"} and body["fields"]


async def test_an_overlong_username_is_a_validation_error_and_writes_nothing(client, demo, runtime):
    body = assert_error(
        await client.post("/auth/login", data={"username": "x" * 500, "password": "demo"}),
        422,
        "FIELDS_VALIDATION_ERROR",
    )
    assert "username" in body["fields"]
    async with runtime.db.read() as session:
        assert await session.scalar(select(func.count()).select_from(LoginThrottle)) == 0


async def test_repeated_failed_logins_lock_the_account_with_429_and_retry_after(client, demo, runtime, clock):
    limit = runtime.settings.login_max_failures
    for _ in range(limit):
        assert_error(
            await client.post("/auth/login", data={"username": "doctor1", "password": "nope"}), 401, "UNAUTHORIZED"
        )
    # Locked now: even the right password is refused until the lock ends.
    response = await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})
    assert_error(response, 429, "TOO_MANY_REQUESTS")
    retry_after = int(response.headers["retry-after"])
    assert 0 < retry_after <= runtime.settings.login_lockout_seconds + 1
    # Other accounts are not affected.
    assert (await client.post("/auth/login", data={"username": "doctor2", "password": "demo"})).status_code == 200
    clock.advance(timedelta(seconds=retry_after))
    assert (await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})).status_code == 200


async def test_a_successful_login_clears_the_failure_count(client, demo, runtime):
    for _ in range(runtime.settings.login_max_failures - 1):
        await client.post("/auth/login", data={"username": "doctor1", "password": "nope"})
    assert (await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})).status_code == 200
    for _ in range(runtime.settings.login_max_failures - 1):
        await client.post("/auth/login", data={"username": "doctor1", "password": "nope"})
    assert (await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})).status_code == 200


async def test_logins_and_failures_are_audited(client, demo, runtime):
    await client.post("/auth/login", data={"username": "doctor1", "password": "nope"})
    await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})
    async with runtime.db.read() as session:
        actions = list(await session.scalars(select(AuditLog.action).order_by(AuditLog.id)))
    assert actions == ["login-failed", "login"]


async def test_the_token_authorizes_calls_and_me_names_its_user(client, login):
    doctor = await login("doctor2")
    response = await client.get("/auth/me", headers=doctor.headers)
    assert response.status_code == 200 and response.json()["username"] == "doctor2"


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer "},
        {"Authorization": "Bearer garbage"},
        {"Authorization": "Bearer " + "x" * 5000},
        {"Authorization": "Basic ZG9jdG9yMTpkZW1v"},
        {"Authorization": "garbage"},
        {"Authorization": "Bearer \u00e9\u00e9".encode()},
    ],
)
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/profile/appointments"),
        ("PATCH", "/profile/appointments"),
        ("GET", "/api/appointments"),
        ("GET", "/api/appointments/1"),
        ("GET", "/auth/me"),
        ("POST", "/auth/logout"),
    ],
)
async def test_a_missing_or_garbage_token_is_401_on_every_protected_endpoint(client, demo, headers, method, path):
    response = await client.request(method, path, headers=headers)
    assert_error(response, 401, "UNAUTHORIZED")
    assert response.headers["www-authenticate"] == "Bearer"


async def test_logout_revokes_the_token_even_with_the_auth_cache_warm(client, login, runtime):
    doctor = await login("doctor1")
    other = await login("doctor1")  # a second session of the same user stays valid
    assert (await client.get("/auth/me", headers=doctor.headers)).status_code == 200  # cached now
    assert (await client.post("/auth/logout", headers=doctor.headers)).status_code == 204
    assert_error(await client.get("/auth/me", headers=doctor.headers), 401, "UNAUTHORIZED")
    assert_error(await client.put("/profile/appointments", headers=doctor.headers), 401, "UNAUTHORIZED")
    assert_error(await client.post("/auth/logout", headers=doctor.headers), 401, "UNAUTHORIZED")
    assert (await client.get("/auth/me", headers=other.headers)).status_code == 200


async def test_a_revoked_token_is_refused_by_a_fresh_instance_reading_the_database(client, login, runtime):
    doctor = await login("doctor1")
    await client.post("/auth/logout", headers=doctor.headers)
    runtime.auth_cache._entries.clear()
    assert_error(await client.get("/auth/me", headers=doctor.headers), 401, "UNAUTHORIZED")


async def test_a_token_expires_after_its_lifetime_even_when_cached(client, login, runtime, clock):
    doctor = await login("doctor1")
    assert (await client.get("/auth/me", headers=doctor.headers)).status_code == 200
    clock.advance(timedelta(seconds=runtime.settings.token_ttl_seconds - 1))
    assert (await client.get("/auth/me", headers=doctor.headers)).status_code == 200
    clock.advance(timedelta(seconds=1))
    body = assert_error(await client.get("/auth/me", headers=doctor.headers), 401, "UNAUTHORIZED")
    assert "expired" in body["message"]


async def test_a_deactivated_user_loses_access(client, login, runtime):
    from doctordesk.store.tables import User

    doctor = await login("doctor1")
    async with runtime.db.transaction() as session:
        user = await session.get(User, doctor.user["id"])
        user.active = False
    runtime.auth_cache.drop_user(doctor.user["id"])
    assert_error(await client.get("/auth/me", headers=doctor.headers), 401, "UNAUTHORIZED")
    assert_error(
        await client.post("/auth/login", data={"username": "doctor1", "password": "demo"}), 401, "UNAUTHORIZED"
    )


async def test_a_polling_client_stays_cached_between_its_list_polls(runtime):
    """The list polls every ``poll_list_seconds``: a token cached for less would be read from the database on
    nearly every real poll."""
    assert runtime.auth_cache.ttl > runtime.settings.poll_list_seconds


async def test_concurrent_requests_of_one_uncached_token_read_it_from_the_database_once(client, login, runtime):
    from sqlalchemy import event

    doctor = await login("doctor1")
    runtime.auth_cache._entries.clear()
    reads: list[str] = []

    def count(_conn, _cursor, statement, *_args):
        if "access_tokens.token_hash" in statement.partition("WHERE")[2]:  # = , IN or = ANY: a token read
            reads.append(statement)

    event.listen(runtime.db.screen_read_engine.sync_engine, "before_cursor_execute", count)
    try:
        answers = await asyncio.gather(*(client.get("/auth/me", headers=doctor.headers) for _ in range(20)))
    finally:
        event.remove(runtime.db.screen_read_engine.sync_engine, "before_cursor_execute", count)
    assert [a.status_code for a in answers] == [200] * 20
    assert len(reads) == 1


async def test_concurrent_requests_of_an_unknown_token_are_all_refused(client, demo):
    headers = {"Authorization": "Bearer " + "x" * 43}
    answers = await asyncio.gather(*(client.get("/auth/me", headers=headers) for _ in range(5)))
    for answer in answers:
        assert_error(answer, 401, "UNAUTHORIZED")


async def test_a_cached_token_revoked_without_an_event_is_refused_after_the_periodic_check(client, login, runtime):
    from doctordesk.workers.token_checks import TokenChecks

    doctor = await login("doctor1")
    assert (await client.get("/auth/me", headers=doctor.headers)).status_code == 200  # cached now
    async with runtime.db.transaction() as session:  # revoked where no event tells this instance (another one)
        token = await session.scalar(select(AccessToken).where(AccessToken.token_hash == token_hash(doctor.token)))
        token.revoked_at = runtime.clock.now()
    assert (await client.get("/auth/me", headers=doctor.headers)).status_code == 200  # still trusted from memory
    await TokenChecks(runtime, interval=60).check()
    assert_error(await client.get("/auth/me", headers=doctor.headers), 401, "UNAUTHORIZED")
