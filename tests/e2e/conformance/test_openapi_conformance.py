"""The whole API description, checked against the running service by Schemathesis: for each operation of
/openapi.json, requests generated from its schema (valid and invalid ones, plus every documented method missing),
sent to a real server on loopback, and every check Schemathesis has — no server error, only documented status
codes, content types and headers, every response body (errors and stream events included) matching its schema,
valid requests accepted, invalid ones refused, missing methods answered 405 with the right ``Allow``, and
authentication not ignored.

One run per caller: a doctor and a support agent over every operation, an administrator over the administration
API, a service account's API key over the integration API. The settings (examples per operation, the phases) are
in ``schemathesis.toml`` beside this file; the request rules OpenAPI cannot state are in ``hooks.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.live import LiveServer, serving

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
CONFIG = HERE / "schemathesis.toml"
HYPOTHESIS_STORAGE = ROOT / ".hypothesis"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # No chat rate limit (the run sends many messages); heartbeats often, so that stream reads end quickly. Webhook
    # URLs may name any host: the description states the URL's form, and whether a loopback or private address is
    # refused is the server's setting, not something a schema can say. Re-authentication's wrong passwords count
    # as failed sign-ins (docs/accounts.md#recent-authentication): the run sends hundreds, and the throttle's
    # ceilings are raised so that the run's own sign-ins (a token for each logout) still pass.
    with serving(
        tmp_path_factory.mktemp("conformance"),
        DOCTORDESK_LOGIN_MAX_FAILURES="1000",
        DOCTORDESK_LOGIN_USERNAME_MAX_FAILURES="100000",
        DOCTORDESK_CHAT_SEND_PER_MINUTE="0",
        DOCTORDESK_HEARTBEAT_SECONDS="0.2",
        DOCTORDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES="true",
    ) as live:
        yield live


def login(server: LiveServer, username: str) -> dict[str, str]:
    response = httpx.post(f"{server.url}/auth/login", data={"username": username, "password": "demo"}, timeout=10)
    response.raise_for_status()
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


def api_key(server: LiveServer) -> dict[str, str]:
    admin = login(server, "admin")
    account = httpx.post(f"{server.url}/admin/service-accounts", headers=admin, json={"name": "conformance"}).json()
    scopes = ["appointments:write", "appointments:read"]
    key = httpx.post(
        f"{server.url}/admin/service-accounts/{account['id']}/keys", headers=admin, json={"scopes": scopes}
    ).json()["key"]
    return {"X-Api-Key": key}


# The administration's operations refuse a doctor or a support agent (403) before they read the request. The runs as
# those users keep their examples and fuzzing cases (the refusal, documented, whatever the input) but skip the
# coverage phase's boundary values there, each refused the same way: generating them was a quarter of the run. The
# administrator's run covers every one of them.
REFUSED_ADMINISTRATION = """
[[operations]]
include-path-regex = "^/(admin|profile/admin)/"
phases.coverage.enabled = false
"""


def run_schemathesis(
    server: LiveServer,
    headers: dict[str, str],
    work: Path,
    *,
    username: str = "",
    only: str = "",
    refused: str = "",
    coverage: bool = True,
) -> None:
    """Run Schemathesis with ``schemathesis.toml`` and the ``refused`` operations' settings added to it (without
    the coverage phase's boundary values when ``coverage`` is false)."""
    work.mkdir(parents=True, exist_ok=True)
    config = work / "schemathesis.toml"
    settings = CONFIG.read_text()
    if not coverage:
        settings = settings.replace("[phases.coverage]\nenabled = true", "[phases.coverage]\nenabled = false")
        assert "[phases.coverage]\nenabled = false" in settings
    config.write_text(settings + refused)
    command = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run"]
    command += [f"{server.url}/openapi.json", "--no-color", "--report", "junit", "--report-dir", str(work)]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    if only:
        command += ["--include-path-regex", only]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CONFORMANCE_SERVER": server.url, "CONFORMANCE_USERNAME": username}
    # Hypothesis keeps its Unicode tables (each character's category, and which characters UTF-8 and ASCII encode),
    # and the constants it reads from the source of the modules it finds loaded, in its storage directory. In a run's
    # own working directory they were computed again by every run: about three seconds of CPU each, a walk over every
    # code point. The repository's directory (the property tests' as well) keeps them from one run to the next; the
    # runs keep no example database (`database = "none"`), so no run's cases depend on another's.
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(HYPOTHESIS_STORAGE)
    # The server is on loopback, never behind a proxy: saying so spares each request the HTTP client's two walks over
    # the environment looking for proxy settings, a third of its own work for a request (the lower-case name is the
    # one read first).
    env["no_proxy"] = ",".join(filter(None, [os.environ.get("no_proxy") or os.environ.get("NO_PROXY"), "127.0.0.1"]))
    # Run outside the repository: Schemathesis keeps a cache in its working directory.
    # The bound is for a run that hangs, not a time the run must keep: the longest run takes about four minutes on
    # a quiet two-core machine and went past ten beside other CPU-heavy work.
    result = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]


@pytest.mark.slow
@pytest.mark.parametrize("username", ["doctor1", "support1"])
def test_every_operation_conforms_to_the_api_description_for_a_user(
    server: LiveServer, tmp_path: Path, username: str
) -> None:
    # The user's token is set by hooks.py (a new one for each logout). The coverage phase's boundary values probe
    # the checks of a request's form, one set for every role (and a doctor's screens refuse a support agent before
    # reading the form): the doctor's run sends them to every operation; the support agent's keeps its examples and
    # fuzzing cases (what differs by role: the answers, refusals included) and does not send them again.
    headers = {"X-Client-Id": f"conformance-{username}"}
    run_schemathesis(
        server, headers, tmp_path, username=username, refused=REFUSED_ADMINISTRATION, coverage=username == "doctor1"
    )


@pytest.mark.slow
def test_the_administration_api_conforms_to_the_api_description_for_an_admin(
    server: LiveServer, tmp_path: Path
) -> None:
    headers = {"X-Client-Id": "conformance-admin"}
    run_schemathesis(server, headers, tmp_path, username="admin", only="^/(admin|profile/admin)/")


@pytest.mark.slow
def test_the_integration_api_conforms_to_the_api_description_for_an_api_key(server: LiveServer, tmp_path: Path) -> None:
    run_schemathesis(server, api_key(server), tmp_path, only="^/integration/")


@pytest.mark.slow
@pytest.mark.parametrize("caller", ["key", "patient1"])
def test_the_fhir_patient_operations_conform_for_an_api_key_and_a_patient(
    server: LiveServer, tmp_path: Path, caller: str
) -> None:
    # Patient read, search and $everything (docs/fhir.md#everything): a key that reads every patient, and a patient
    # who reads only themself (anyone else is 404, an unknown id alike).
    headers = {"Authorization": f"Bearer {api_key(server)['X-Api-Key']}"} if caller == "key" else login(server, caller)
    run_schemathesis(server, headers, tmp_path, only="^/fhir/Patient")
