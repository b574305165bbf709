"""Keeping screens current in the browser: the stream reconnecting after a server restart, polling alone when the
stream is blocked, and a change made elsewhere reaching an open list through the stream."""

from __future__ import annotations

import time

import pytest

from tests.e2e.web.conftest import decide_elsewhere, sign_in
from tests.support.live import serving
from tests.support.moments import MONDAY_MORNING

pytestmark = pytest.mark.browser

REQUESTS = (2, 3, 4, 5)  # doctor1's open requests these tests decline (one each)


@pytest.fixture(scope="module")
def fast_server(tmp_path_factory: pytest.TempPathFactory):
    """A server whose list polls every 2 s (the default is 30 s)."""
    with serving(tmp_path_factory.mktemp("web-sync"), at=MONDAY_MORNING, DOCTORDESK_POLL_LIST_SECONDS="2") as live:
        yield live


def wait_for_status(page, appointment: int, status: str, *, within: float) -> float:
    started = time.monotonic()
    page.locator(f'[data-id="status-{appointment}"][data-value="{status}"]').wait_for(timeout=within * 1000)
    return time.monotonic() - started


def test_a_change_elsewhere_reaches_the_open_list_through_the_stream(server, new_page):
    page = new_page(server.url)
    sign_in(page, "doctor1")
    page.locator('#connection[data-status="live"]').wait_for()
    page.wait_for_timeout(300)
    decide_elsewhere(server.url, REQUESTS[0], "decline")
    # The list polls every 30 s: only the stream's Timeout explains an update this fast.
    assert wait_for_status(page, REQUESTS[0], "Declined", within=3) < 3


def test_the_stream_reconnects_after_the_server_restarts(live_server, new_page, problems):
    problems.allowed.extend(["ERR_CONNECTION_REFUSED", "net::", "Failed to load resource"])
    page = new_page(live_server.url)
    sign_in(page, "doctor1")
    page.locator('#connection[data-status="live"]').wait_for()
    live_server.restart()
    page.locator('#connection[data-status="live"]').wait_for(timeout=20_000)
    page.wait_for_timeout(500)
    decide_elsewhere(live_server.url, REQUESTS[1], "decline")
    assert wait_for_status(page, REQUESTS[1], "Declined", within=3) < 3


def test_polling_alone_keeps_the_screen_current_when_the_stream_is_blocked(fast_server, new_page, problems):
    problems.allowed.extend(["net::", "Failed to load resource"])
    page = new_page(fast_server.url)
    page.route("**/profile/stream?*", lambda route: route.abort())
    sign_in(page, "doctor1")
    decide_elsewhere(fast_server.url, REQUESTS[2], "decline")
    wait_for_status(page, REQUESTS[2], "Declined", within=6)
    assert page.locator("#connection").get_attribute("data-status") != "live"


def test_the_tabs_of_one_browser_share_one_stream_and_all_stay_current(server, browser):
    context = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 860})
    try:
        first, second = context.new_page(), context.new_page()
        sign_in(first, "doctor1")
        second.goto("/")  # a new tab of the same browser takes the session the first tab holds
        second.locator('[data-id="title"]').wait_for()
        second.bring_to_front()
        second.evaluate("window.dispatchEvent(new Event('focus'))")
        second.locator('#connection[data-status="live"]').wait_for()
        first.wait_for_function("() => !window.doctordesk.shell.link.source")
        leaders = [p.evaluate("Boolean(window.doctordesk.shell.link.source)") for p in (first, second)]
        assert leaders == [False, True]  # one open stream for the two tabs
        decide_elsewhere(server.url, REQUESTS[3], "decline")
        for page in (second, first):  # the follower acts on the Timeout the leader forwards
            wait_for_status(page, REQUESTS[3], "Declined", within=3)
    finally:
        context.close()
