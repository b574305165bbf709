"""Two instances (PostgreSQL, Redis) behind nginx, with the configuration docs/operations.md shows: the event
stream passes unbuffered with its heartbeats, X-Forwarded-For counts from the proxy only, /metrics stays closed
to clients of the proxy, a logout through either instance closes streams on both, and each instance answers the
other's unchanged polls from memory."""

from __future__ import annotations

import asyncio
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.e2e.deployment.processes import metric
from tests.e2e.realtime.test_routing_live import User, approve_one, login, requested_ids
from tests.e2e.realtime.test_scale_out import postgres_env, redis_url
from tests.support import databases
from tests.support.live import LiveServer, free_port
from tests.support.sse import Stream, open_stream

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

ROOT = Path(__file__).resolve().parents[3]
LIST = "/profile/appointments"
# Client addresses on this host other than the proxy's (loopback, so /metrics would be theirs if asked directly).
ALICE, BOB = "127.0.0.3", "127.0.0.4"


def documented_config() -> str:
    """The nginx.conf of docs/operations.md, as written there."""
    text = (ROOT / "docs" / "operations.md").read_text()
    found = re.search(r"### nginx in front of two instances.*?```nginx\n(.*?)```", text, re.DOTALL)
    assert found, "docs/operations.md lost its nginx configuration"
    return found.group(1)


def nginx_binary() -> str:
    subprocess.run(
        ["sh", str(ROOT / ".ci" / "ensure-debian-package"), "nginx", "nginx", "the nginx deployment tests skip"],
        check=False,
    )
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        databases.unavailable("nginx", "Debian's nginx package is not installed and could not be installed here")
    return str(found)


@dataclass
class Deployment:
    one: LiveServer
    two: LiveServer
    proxy: str

    def client(self, base_url: str, source: str = ALICE, **options: object) -> httpx.AsyncClient:
        transport = httpx.AsyncHTTPTransport(local_address=source)
        return httpx.AsyncClient(base_url=base_url, transport=transport, timeout=10, **options)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    binary = nginx_binary()
    base = tmp_path_factory.mktemp("nginx")
    env = {**postgres_env(), "DOCTORDESK_REDIS_URL": redis_url(), "DOCTORDESK_REDIS_CHANNEL": secrets.token_hex(4)}
    one, two = LiveServer(base / "one", extra_env=env), LiveServer(base / "two", extra_env=env)
    two.data_dir.mkdir(parents=True)
    one.prepare()
    port = free_port()
    config = documented_config()
    for written, real in (("8001", one.port), ("8002", two.port), ("8080", port)):
        config = config.replace(f"127.0.0.1:{written};", f"127.0.0.1:{real};")
    (base / "nginx.conf").write_text(config)
    with open(base / "nginx.log", "ab") as log:
        nginx = subprocess.Popen(
            [binary, "-p", str(base), "-c", str(base / "nginx.conf"), "-e", "stderr", "-g", "daemon off;"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        with ThreadPoolExecutor(2) as starting:  # the two instances start side by side
            list(starting.map(LiveServer.start, (one, two)))
        proxy = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while httpx.get(f"{proxy}/healthz", timeout=5).status_code != 200:
            assert nginx.poll() is None and time.monotonic() < deadline, (base / "nginx.log").read_text()
        yield Deployment(one, two, proxy)
    finally:
        nginx.terminate()
        nginx.wait(10)
        two.stop()
        one.stop()


async def test_the_stream_passes_the_proxy_unbuffered_with_its_heartbeats(deployed: Deployment) -> None:
    async with deployed.client(deployed.proxy) as http, deployed.client(deployed.proxy) as other:
        doctor = await login(http, "doctor1")
        page = await User(http, doctor.token).put(LIST, "n-list")
        async with open_stream(http, headers=doctor.headers("n-list")) as stream:
            assert stream.response.headers["content-type"].startswith("text/event-stream")
            for _ in range(3):  # each heartbeat arrives as it is sent (a buffering proxy would hold them back)
                assert (await stream.next(timeout=3)).data == ""
            # A change made through whichever instance the proxy picks reaches the stream at once.
            await approve_one(User(other, doctor.token), requested_ids(page), "n-other")
            assert (await stream.next_message(timeout=3)).data == "Timeout"


async def test_x_forwarded_for_counts_from_the_proxy_only(deployed: Deployment) -> None:
    async with (
        deployed.client(deployed.proxy, ALICE) as alice,
        deployed.client(deployed.proxy, BOB) as bob,
        deployed.client(deployed.one.url, ALICE) as alice_direct,
    ):
        # Alice claims another address in the header: nginx appends hers, and hers is what is counted.
        for _ in range(5):
            answer = await alice.post("/auth/login", data=_guess(), headers={"X-Forwarded-For": "198.51.100.20"})
            assert answer.status_code == 401, answer.text
        assert (
            await alice.post("/auth/login", data=_demo(), headers={"X-Forwarded-For": "203.0.113.5"})
        ).status_code == 429
        assert (await bob.post("/auth/login", data=_demo())).status_code == 200
        # Straight to an instance the header is not believed at all: Alice is still herself.
        direct = await alice_direct.post("/auth/login", data=_demo(), headers={"X-Forwarded-For": BOB})
        assert direct.status_code == 429


async def test_metrics_are_closed_to_clients_of_the_proxy(deployed: Deployment) -> None:
    async with deployed.client(deployed.proxy) as proxied, deployed.client(deployed.one.url) as direct:
        refused = await proxied.get("/metrics")
        assert refused.status_code == 403 and refused.json()["code"] == "FORBIDDEN"
        # The same client on this host, straight to the instance, is a local scraper.
        assert (await direct.get("/metrics")).status_code == 200


async def test_a_logout_through_the_proxy_closes_the_streams_on_both_instances(deployed: Deployment) -> None:
    async with (
        deployed.client(deployed.proxy) as http,
        deployed.client(deployed.one.url) as on_one,
        deployed.client(deployed.two.url) as on_two,
    ):
        doctor = await login(http, "doctor2")
        async with (
            open_stream(on_one, headers=doctor.headers("n-one")) as first,
            open_stream(on_two, headers=doctor.headers("n-two")) as second,
        ):
            await first.next()
            await second.next()
            started = time.monotonic()
            assert (await http.post("/auth/logout", headers=doctor.headers("n-one"))).status_code == 204
            for stream in (first, second):
                await _closed(stream)
            assert time.monotonic() - started < 2.0


async def test_each_instance_answers_the_others_unchanged_polls_from_memory(deployed: Deployment) -> None:
    async with (
        deployed.client(deployed.proxy) as http,
        deployed.client(deployed.one.url, "127.0.0.1") as one,
        deployed.client(deployed.two.url, "127.0.0.1") as two,
    ):
        doctor = await login(http, "doctor1")
        for issuer, answerer in ((one, two), (two, one)):
            page = await User(issuer, doctor.token).put(LIST, "n-poll")
            poll = {**doctor.headers("n-poll"), "X-Screen-State": page["state"]}
            first = await answerer.patch(LIST, headers=poll)
            assert first.status_code == 200 and first.json()["patches"] == [], first.text
            before = metric((await answerer.get("/metrics")).text, "doctordesk_polls_from_memory")
            assert (await answerer.patch(LIST, headers=poll)).json()["patches"] == []
            assert metric((await answerer.get("/metrics")).text, "doctordesk_polls_from_memory") == before + 1
            # And through the proxy, whichever instance it picks.
            assert (await http.patch(LIST, headers=poll)).json()["patches"] == []


async def _closed(stream: Stream) -> None:
    await asyncio.wait_for(stream.closed.wait(), 2.0)


def _guess() -> dict[str, str]:
    return {"username": "doctor3", "password": "guess"}


def _demo() -> dict[str, str]:
    return {"username": "doctor3", "password": "demo"}
