"""The test workers' own resources (tests/support): a Redis database number and ports per worker that no other
worker of the run uses."""

from __future__ import annotations

import socket

from tests.support import databases, live


def test_each_worker_gets_the_next_redis_database_wrapping_within_sixteen():
    assert databases.worker_redis_url("redis://127.0.0.1:6379/8", 0) == "redis://127.0.0.1:6379/8"
    assert databases.worker_redis_url("redis://127.0.0.1:6379/8", 1) == "redis://127.0.0.1:6379/9"
    assert databases.worker_redis_url("redis://127.0.0.1:6379/15", 1) == "redis://127.0.0.1:6379/0"
    assert databases.worker_redis_url("redis://127.0.0.1:6379", 2) == "redis://127.0.0.1:6379/2"


def test_the_workers_postgres_database_is_the_configured_name_and_the_worker():
    configured = databases._database_name(databases.CONFIGURED_POSTGRES_URL)
    assert databases.POSTGRES_DATABASE == f"{configured}_{databases.WORKER}"
    assert databases.POSTGRES_TEMPLATE == f"{configured}_template"
    assert databases.POSTGRES_URL.endswith(f"/{configured}_{databases.WORKER}")


def test_free_ports_come_from_the_workers_own_block_below_the_ephemeral_range():
    start = live.FIRST_PORT + (databases.WORKER_INDEX % live.PORT_BLOCKS) * live.PORT_BLOCK
    ports = [live.free_port() for _ in range(5)]
    assert all(start <= p < start + live.PORT_BLOCK for p in ports)
    assert len(set(ports)) == 5
    assert max(ports) < 32768


def test_a_port_in_use_is_not_handed_out():
    taken = live.free_port()
    with socket.socket() as held:
        held.bind(("127.0.0.1", taken))
        live._next_port[0] -= 1  # the next pick would be the same port again
        assert live.free_port() != taken
