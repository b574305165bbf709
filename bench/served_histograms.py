"""What a served doctordesk measured inside itself over a run: its ``/metrics`` histograms read before and after,
the difference taken bucket by bucket. The request histogram (``doctordesk_request_seconds``: from the request's
arrival in the app to its answer) tells the server's own share of a latency apart from the network's and the load
generator's; the collector's (``doctordesk_gc_pause_seconds``) how often the process stopped for it and how long."""

from __future__ import annotations

import math
from collections import defaultdict

import httpx
from prometheus_client.parser import text_string_to_metric_families

# (metric, labels without "le") -> {upper bound: cumulative count}
Buckets = dict[tuple[str, tuple[tuple[str, str], ...]], dict[float, float]]


async def read(http: httpx.AsyncClient) -> Buckets:
    """Every histogram bucket of the server's ``/metrics`` now."""
    found: Buckets = defaultdict(dict)
    text = (await http.get("/metrics")).text
    for family in text_string_to_metric_families(text):
        if family.type != "histogram":
            continue
        for sample in family.samples:
            if sample.name.endswith("_bucket"):
                labels = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "le"))
                found[(family.name, labels)][float(sample.labels["le"])] = sample.value
    return found


def upper_percentile(before: Buckets, after: Buckets, metric: str, labels: dict[str, str], p: float) -> float | None:
    """The bucket bound (seconds) under which ``p`` % of what was observed between the two readings fell; ``inf``
    beyond the last bound, None when nothing was observed."""
    key = (metric, tuple(sorted(labels.items())))
    start, end = before.get(key, {}), after.get(key, {})
    counts = sorted((bound, n - start.get(bound, 0.0)) for bound, n in end.items())
    total = counts[-1][1] if counts else 0.0
    if total <= 0:
        return None
    for bound, n in counts:
        if n >= total * p / 100:
            return bound
    return math.inf


def observed(before: Buckets, after: Buckets, metric: str, labels: dict[str, str]) -> int:
    key = (metric, tuple(sorted(labels.items())))
    return int(after.get(key, {}).get(math.inf, 0.0) - before.get(key, {}).get(math.inf, 0.0))


def over(before: Buckets, after: Buckets, metric: str, labels: dict[str, str], bound: float) -> int:
    """How many observations between the readings were longer than ``bound`` (one of the histogram's bounds)."""
    key = (metric, tuple(sorted(labels.items())))
    within = after.get(key, {}).get(bound, 0.0) - before.get(key, {}).get(bound, 0.0)
    return observed(before, after, metric, labels) - int(within)


def inside(before: Buckets, after: Buckets, poll_route: str, send_route: str) -> str:
    """The server's own share of the polls' (PATCH ``poll_route``) and sends' (POST ``send_route``) latencies (its
    request histogram: bucket bounds, so "≤"), and how often its collector stopped it, by generation."""

    def ms(labels: dict[str, str], p: float) -> str:
        bound = upper_percentile(before, after, "doctordesk_request_seconds", labels, p)
        return "-" if bound is None else f"≤ {bound * 1000:g}"

    poll, send = {"method": "PATCH", "route": poll_route}, {"method": "POST", "route": send_route}
    gc = "doctordesk_gc_pause_seconds"
    pauses = [
        f"gen {g} {observed(before, after, gc, {'generation': g})} "
        f"({over(before, after, gc, {'generation': g}, 0.01)} > 10 ms)"
        for g in ("0", "1", "2")
    ]
    return (
        f"  inside the server: polls p50 {ms(poll, 50)} ms, p99 {ms(poll, 99)} ms; sends p50 {ms(send, 50)} ms, p99 "
        f"{ms(send, 99)} ms; collector passes {', '.join(pauses)}"
    )
