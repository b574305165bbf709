"""Throttling failed logins per username and client address, with a per-username ceiling that slows rather than
locks; on SQLite and PostgreSQL. Clients at different addresses are real ASGI clients whose peer address differs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import select

from doctordesk.store.tables import AuditLog

# Small numbers keep the rules visible: 3 failures lock an address out of a username for 5 minutes; 7 failures of
# a username from everywhere slow it to one attempt a minute.
LIMITS = {
    "login_max_failures": 3,
    "login_lockout_seconds": 300,
    "login_username_max_failures": 7,
    "login_username_interval_seconds": 60,
}


@pytest.fixture
def settings(database_url, settings_factory):
    return settings_factory(database_url, **LIMITS)


@pytest.fixture
async def at(app) -> AsyncIterator[Callable[[str], httpx.AsyncClient]]:
    """``at("203.0.113.9")``: a client whose requests come from that address."""
    clients: dict[str, httpx.AsyncClient] = {}

    def client_at(host: str) -> httpx.AsyncClient:
        if host not in clients:
            transport = httpx.ASGITransport(app=app, client=(host, 40000))
            clients[host] = httpx.AsyncClient(transport=transport, base_url="http://testserver")
        return clients[host]

    yield client_at
    for c in clients.values():
        await c.aclose()


async def log_in(client: httpx.AsyncClient, password: str, username: str = "doctor1") -> httpx.Response:
    return await client.post("/auth/login", data={"username": username, "password": password})


def assert_throttled(response: httpx.Response, *, at_most: int) -> int:
    assert response.status_code == 429, response.text
    body = response.json()
    assert body["kind"] == "error" and body["code"] == "TOO_MANY_REQUESTS" and body["status"] == 429
    retry_after = int(response.headers["retry-after"])
    assert 0 < retry_after <= at_most
    return retry_after


async def test_an_attacker_failing_from_one_address_does_not_lock_the_doctor_out_from_another(demo, at):
    attacker, doctor = at("203.0.113.9"), at("198.51.100.20")
    for _ in range(LIMITS["login_max_failures"]):
        assert (await log_in(attacker, "guess")).status_code == 401
    assert_throttled(await log_in(attacker, "demo"), at_most=300)  # locked out there, even with the password
    assert (await log_in(doctor, "demo")).status_code == 200


@pytest.mark.parametrize("username", ["doctor1", "nobody"])
async def test_parallel_guesses_from_one_address_get_no_more_checks_than_the_limit(demo, at, clock, username):
    attacker = at("203.0.113.9")
    answers = await asyncio.gather(*(log_in(attacker, f"guess{i}", username) for i in range(20)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [401] * LIMITS["login_max_failures"] + [429] * (20 - LIMITS["login_max_failures"])
    retry_after = max(assert_throttled(a, at_most=300) for a in answers if a.status_code == 429)
    clock.advance(timedelta(seconds=retry_after - 1))
    assert_throttled(await log_in(attacker, "guess", username), at_most=1)
    clock.advance(timedelta(seconds=1))
    assert (await log_in(attacker, "guess", username)).status_code == 401  # the lock has ended


async def test_the_username_ceiling_slows_new_addresses_to_one_attempt_per_interval(demo, at, clock):
    # Spread over addresses, each below its own limit: 2 + 2 + 2 + 1 failures reach the username's ceiling of 7.
    for n, tries in ((1, 2), (2, 2), (3, 2), (4, 1)):
        for _ in range(tries):
            assert (await log_in(at(f"203.0.113.{n}"), "guess")).status_code == 401
    assert (await log_in(at("203.0.113.5"), "guess")).status_code == 401  # takes this minute's attempt
    # Everyone else waits for the next one, even with the right password; nobody is locked out for longer.
    wait = assert_throttled(await log_in(at("198.51.100.20"), "demo"), at_most=60)
    assert_throttled(await log_in(at("203.0.113.6"), "guess"), at_most=60)
    clock.advance(timedelta(seconds=wait))
    assert (await log_in(at("198.51.100.20"), "demo")).status_code == 200
    assert_throttled(await log_in(at("203.0.113.6"), "guess"), at_most=60)


async def test_the_username_count_drains_so_the_slowing_ends(demo, at, clock):
    for n in range(1, 5):
        for _ in range(2):
            await log_in(at(f"203.0.113.{n}"), "guess")
    assert_throttled(await log_in(at("203.0.113.9"), "guess"), at_most=60)
    # 8 failures, one forgiven per minute: after 2 minutes the count is under the ceiling again.
    clock.advance(timedelta(minutes=2))
    answers = [await log_in(at(f"198.51.100.{n}"), "guess") for n in range(1, 3)]
    assert [a.status_code for a in answers] == [401, 401]


async def test_an_address_the_doctor_logged_in_from_is_not_slowed_but_keeps_its_own_limit(demo, at, clock):
    home = at("198.51.100.20")
    assert (await log_in(home, "demo")).status_code == 200
    clock.advance(timedelta(days=3))
    for n in range(1, 5):
        for _ in range(2):
            await log_in(at(f"203.0.113.{n}"), "guess")
    assert_throttled(await log_in(at("192.0.2.1"), "demo"), at_most=60)  # a new place waits its turn
    assert (await log_in(home, "demo")).status_code == 200  # home does not
    for _ in range(LIMITS["login_max_failures"]):
        assert (await log_in(home, "typo")).status_code == 401
    assert_throttled(await log_in(home, "demo"), at_most=300)


async def test_an_address_is_known_for_30_days_after_its_last_successful_login(demo, at, clock):
    home = at("198.51.100.20")
    assert (await log_in(home, "demo")).status_code == 200
    clock.advance(timedelta(days=30))
    for n in range(1, 5):
        for _ in range(2):
            await log_in(at(f"203.0.113.{n}"), "guess")
    assert_throttled(await log_in(home, "demo"), at_most=60)


async def test_the_addresses_of_one_ipv6_64_network_count_as_one(demo, at):
    for host in ("2001:db8:0:1::1", "2001:db8:0:1::2", "2001:db8:0:1:ffff:ffff:ffff:fffe"):
        assert (await log_in(at(host), "guess")).status_code == 401
    assert_throttled(await log_in(at("2001:db8:0:1::9"), "demo"), at_most=300)
    assert (await log_in(at("2001:db8:0:2::1"), "demo")).status_code == 200


async def test_logins_and_failures_are_audited_with_the_client_address(demo, at, runtime):
    await log_in(at("203.0.113.9"), "guess")
    await log_in(at("2001:db8:0:1::5"), "demo")
    async with runtime.db.read() as session:
        rows = list(await session.execute(select(AuditLog.action, AuditLog.details).order_by(AuditLog.id)))
    assert [(action, details.get("address")) for action, details in rows] == [
        ("login-failed", "203.0.113.9"),
        ("login", "2001:db8:0:1::/64"),
    ]


async def test_a_throttled_login_is_audited_with_its_address_and_without_the_password(demo, at, runtime):
    for _ in range(3):
        await log_in(at("203.0.113.9"), "guess")
    assert_throttled(await log_in(at("203.0.113.9"), "demo"), at_most=300)
    async with runtime.db.read() as session:
        rows = list(
            await session.execute(
                select(AuditLog.action, AuditLog.entity_id, AuditLog.details).where(
                    AuditLog.action == "login-throttled"
                )
            )
        )
    assert len(rows) == 1
    [(_, entity_id, details)] = rows
    assert entity_id == demo.users["doctor1"]
    assert details["username"] == "doctor1" and details["address"] == "203.0.113.9"
    assert 0 < details["retry_after"] <= 300
    assert "demo" not in repr(details.values()) and "password" not in details
