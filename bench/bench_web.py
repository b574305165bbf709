"""The web app's renderer in chromium: applying a small update set in place versus rendering the page again.

A list-like page of N rows (each a Row of five Regular/Badge/Link elements, as the appointment list has) is
rendered once; then, 200 times, an update set of one `update` (a status badge) and one `append` (a new row) is
applied by `ScreenView.applyPatches`. Baseline, measured in the same run: rendering the whole page again
(`ScreenView.render`), which is what a client without in-place patching would do on every poll that changed.

    python -m bench.bench_web            (or: make bench)

Needs Debian's chromium (/usr/bin/chromium); prints why and stops when it is missing.
Target: an in-place update set ≥ 10x cheaper than rendering again (p50), at 30 and at 300 rows.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support.browser import LAUNCH_ARGS
from tests.support.live import LiveServer

RUN = """
async ({ rows, repeat }) => {
  const { ScreenView } = await import("/js/render.js");
  const row = (i) => ({ id: `appointment-${i}`, ref: `appointment-${i}`, type: "Row", children: [
    { id: `time-${i}`, ref: `time-${i}`, type: "Regular", value: "Mon 23 Nov 2026, 09:00 CET" },
    { id: `patient-${i}`, ref: `patient-${i}`, type: "Regular", label: "Patient", value: `Patient ${i}` },
    { id: `status-${i}`, ref: `status-${i}`, type: "Badge", value: "requested" },
    { id: `review-${i}`, ref: `review-${i}`, type: "Link", label: "Review and approve",
      action: { method: "PUT", endpoint: `/profile/appointments/${i}/approve` } },
    { id: `chat-${i}`, ref: `chat-${i}`, type: "Link", label: "Chat",
      action: { method: "PUT", endpoint: `/profile/messages/user-chat?appointment-id=${i}` } },
  ]});
  const page = [{ id: "list", ref: "list", type: "Section", label: "Appointments",
                  children: Array.from({ length: rows }, (_, i) => row(i + 1)) }];
  const root = document.createElement("div");
  document.body.append(root);
  const view = new ScreenView(root, { onAction() {}, onNotice() {} });
  view.render(page);
  const quantile = (xs, q) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(q * s.length))];
  };
  const patchTimes = [], renderTimes = [];
  for (let k = 0; k < repeat; k++) {
    const id = rows + k + 1;
    const patches = [
      { op: "update", id: `status-${(k % rows) + 1}`, set: { value: k % 2 ? "requested" : "approved" } },
      { op: "append", parent: "list", elements: [row(id)] },
    ];
    let t = performance.now();
    view.applyPatches(patches);
    root.getBoundingClientRect();  // include layout
    patchTimes.push(performance.now() - t);
    const snapshot = view.elements;
    t = performance.now();
    view.render(snapshot);
    root.getBoundingClientRect();
    renderTimes.push(performance.now() - t);
  }
  root.remove();
  const stats = (xs) => ({ p50: quantile(xs, 0.5), p99: quantile(xs, 0.99) });
  return { patch: stats(patchTimes), render: stats(renderTimes) };
}
"""


def main() -> None:
    if not os.access("/usr/bin/chromium", os.X_OK):
        print("bench_web: /usr/bin/chromium is missing (make browser installs it); skipped")
        return
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        server = LiveServer(Path(tmp))
        server.prepare()
        server.start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path="/usr/bin/chromium", headless=True, args=LAUNCH_ARGS
                )
                page = browser.new_page(base_url=server.url)
                page.goto("/")
                results: list[tuple[str, int, dict[str, Any]]] = []
                for rows in (30, 300):
                    result = page.evaluate(RUN, {"rows": rows, "repeat": 200})
                    results.append(("baseline: render the page again", rows, result["render"]))
                    results.append(("apply update + append in place", rows, result["patch"]))
                browser.close()
        finally:
            server.stop()
    print("web renderer (chromium, ms per update set, 200 runs each)")
    print(f"{'case':<34} {'rows':>5} {'p50 ms':>8} {'p99 ms':>8}")
    for name, rows, stats in results:
        print(f"{name:<34} {rows:>5} {stats['p50']:>8.2f} {stats['p99']:>8.2f}")


if __name__ == "__main__":
    sys.exit(main())
