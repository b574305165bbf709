"""The browser's real-time message parser against the shared vectors (realtime/vectors.json), the same file the
server's and the SDK's parsers are tested with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import doctordesk.realtime

pytestmark = pytest.mark.browser

VECTORS = Path(doctordesk.realtime.__file__).parent / "vectors.json"

RUN = """
async (data) => {
  const { endpointMatcher, parseMessage, InvalidMessage } = await import("/js/message.js");
  const isEndpoint = endpointMatcher(data.patch_endpoints);
  const failures = [];
  for (const v of data.vectors) {
    let got;
    try {
      const m = parseMessage(v.message, isEndpoint);
      got = { valid: true, timeout: m.timeout, endpoint: m.endpoint };
    } catch (e) {
      if (!(e instanceof InvalidMessage)) throw e;
      got = { valid: false };
    }
    const ok = v.valid ? got.valid && got.timeout === v.timeout && got.endpoint === v.endpoint : !got.valid;
    if (!ok) failures.push({ message: v.message, expected: v, got });
  }
  return { failures, count: data.vectors.length };
}
"""


def test_the_browser_parser_passes_every_shared_real_time_vector(server, new_page):
    if not VECTORS.exists():
        pytest.skip("realtime/vectors.json has not landed yet")
    data = json.loads(VECTORS.read_text())
    page = new_page(server.url)
    page.goto("/")
    result = page.evaluate(RUN, data)
    assert result["count"] == len(data["vectors"]) > 10
    assert result["failures"] == []


def test_the_app_takes_the_patch_endpoints_from_the_api_description_and_nothing_else(server, new_page):
    page = new_page(server.url)
    page.goto("/")
    checks = page.evaluate(
        """async () => {
          const sync = await import("/js/sync.js");
          await sync.loadEndpoints();
          return ["/profile/appointments", "/profile/appointments/7", "//evil.example/profile/appointments",
                  "/auth/login"].map((p) => sync.isPatchEndpoint(p));
        }"""
    )
    assert checks == [True, False, False, False]
