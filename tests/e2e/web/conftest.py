"""Browser fixtures: one chromium per test process while browser tests follow one another, a fresh context (cookies,
storage) per test, and a live server with the demo clinic shared by the tests of a module (tests that restart the
server use ``live_server``).

The module's server runs at the suite's Monday morning (``MONDAY_MORNING``, and on from there), and so does the
clock of every page opened on it (``new_page``): what a screen shows does not depend on the machine's weekday or
hour (docs/development.md#the-moment-a-test-runs-at)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from axe_playwright_python.base import AXE_SCRIPT

from doctordesk.domain.clock import SystemClock
from tests.support.browser import LAUNCH_ARGS, chromium_executable
from tests.support.live import LiveServer, clock_of, serving
from tests.support.moments import MONDAY_MORNING

DESKTOP = {"width": 1280, "height": 860}
MOBILE = {"width": 390, "height": 844}


class Chromium:
    """One Playwright driver and one chromium per test process, kept while browser tests follow one another (a
    worker runs the browser modules one after the other) and closed before any other test runs: Playwright's sync
    API keeps an event loop of its own while it runs, which must be gone before the asyncio tests of other modules
    start theirs. Each test still gets a fresh context (cookies, storage)."""

    def __init__(self) -> None:
        self._driver: Any = None
        self._chromium: Any = None

    def get(self) -> Any:
        if self._chromium is None:
            executable = chromium_executable()
            from playwright.sync_api import sync_playwright

            self._driver = sync_playwright()
            playwright = self._driver.__enter__()
            self._chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=LAUNCH_ARGS)
        return self._chromium

    def close(self) -> None:
        if self._chromium is not None:
            self._chromium.close()
            self._driver.__exit__(None, None, None)
            self._chromium = self._driver = None


CHROMIUM = Chromium()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = CHROMIUM.get()
    yield chromium
    for context in chromium.contexts:  # those a module's tests left open
        context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After a browser test whose successor is not one (or the last test), close the shared chromium."""
    try:
        return (yield)
    finally:
        if nextitem is None or Path(nextitem.path).parent != Path(__file__).parent:
            CHROMIUM.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A real server with the demo clinic, shared by one module's tests (they use distinct appointments)."""
    with serving(tmp_path_factory.mktemp("web-live"), at=MONDAY_MORNING) as live:
        yield live


class Problems:
    """Console errors and CSP violations seen by a page: a test fails when there are any it did not expect."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.allowed: list[str] = []

    def watch(self, page: Any) -> None:
        page.on("console", lambda msg: self._console(msg))
        page.on("pageerror", lambda error: self.messages.append(f"page error: {error}"))

    def _console(self, msg: Any) -> None:
        if msg.type == "error":
            self.messages.append(msg.text)

    def unexpected(self) -> list[str]:
        return [m for m in self.messages if not any(a in m for a in self.allowed)]


@pytest.fixture
def problems() -> Problems:
    return Problems()


@pytest.fixture
def new_page(browser: Any, problems: Problems) -> Iterator[Callable[..., Any]]:
    """``new_page(base_url, viewport=DESKTOP, locale=None)`` → a page in a fresh browser context (``locale``: the
    browser's language, e.g. ``de-DE``, which it sends as Accept-Language)."""
    contexts: list[Any] = []

    def make(base_url: str, *, viewport: dict[str, int] | None = None, locale: str | None = None) -> Any:
        options = {"locale": locale} if locale else {}
        context = browser.new_context(base_url=base_url, viewport=viewport or DESKTOP, **options)
        contexts.append(context)
        # The page's clock is its server's (a server at a chosen moment: that moment, running on).
        clock = clock_of(base_url)
        if not isinstance(clock, SystemClock):
            context.clock.install(time=clock.now())
        page = context.new_page()
        page.set_default_timeout(10_000)
        problems.watch(page)
        return page

    yield make
    for context in contexts:
        context.close()
    unexpected = problems.unexpected()
    # 401/404/409/422 answers the tests provoke are logged by chromium as failed resources; CSP violations are not.
    csp = [m for m in unexpected if "Content Security Policy" in m or "Refused to" in m or "page error" in m]
    assert not csp, csp


def sign_in(page: Any, username: str, password: str = "demo") -> None:
    """Log in through the login form and wait for the appointment list."""
    page.goto("/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.locator('[data-id="title"]').wait_for()


def decide_elsewhere(base_url: str, appointment: int, decision: str, *, username: str = "doctor1") -> None:
    """The doctor decides (``approve`` or ``decline``) from another device, through the API a second client uses."""
    with httpx.Client(base_url=base_url, timeout=10) as http:
        token = http.post("/auth/login", data={"username": username, "password": "demo"}).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}", "X-Client-Id": "other-device"}
        version = http.get(f"/api/appointments/{appointment}", headers=headers).json()["version"]
        fields = {"version": str(version)}
        if decision == "decline":
            fields["reason"] = "Declined on another device."
        response = http.post(f"/profile/appointments/{appointment}/{decision}", data=fields, headers=headers)
        assert response.status_code == 200, response.text


# Every rule axe has, over the whole document; only the violations come back (id, impact, help and the first
# four elements' selectors), not the rest of axe's report on every rule.
RUN_AXE = """async () => {
    const results = await axe.run(document, {resultTypes: ["violations"]});
    return results.violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help,
        targets: v.nodes.slice(0, 4).map((n) => n.target.map(String).join(" ")),
    }));
}"""


def settle(page: Any) -> None:
    """Wait until no screen or button is loading (``aria-busy``, which the app sets while a request runs) and the
    page has drawn a frame since: the state a user sees, without a fixed pause (it was 150 ms at every check)."""
    page.wait_for_function("() => !document.querySelector('[aria-busy]')")
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def axe_violations(page: Any, *, while_busy: bool = False) -> list[dict[str, Any]]:
    """axe-core's violations on the page once it has settled (``while_busy``: as it stands, a request still
    running, e.g. behind a dialog that asks something first). axe is put into a document once (the app changes
    screens without loading another document): the script is 570 kB that chromium parsed again at every check."""
    if while_busy:
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    else:
        settle(page)
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE_SCRIPT)
    violations: list[dict[str, Any]] = page.evaluate(RUN_AXE)
    return violations
