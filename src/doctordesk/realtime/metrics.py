"""Prometheus metrics of one process (its own registry, so several apps can live in one test process)."""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.open_streams = Gauge("doctordesk_open_streams", "SSE streams open on this instance", registry=r)
        self.events_published = Counter(
            "doctordesk_events_published", "Domain events published to the bus by this instance", registry=r
        )
        self.events_received = Counter(
            "doctordesk_events_received", "Domain events received from the bus by this instance", registry=r
        )
        self.events_marked_only = Counter(
            "doctordesk_events_marked_only",
            "Domain events of other instances only marked here: none of this instance's streams, caches or tasks "
            "listens for them",
            registry=r,
        )
        self.messages_delivered = Counter(
            "doctordesk_messages_delivered", "Real-time messages queued to open streams", registry=r
        )
        self.outbox_depth = Gauge("doctordesk_push_outbox_depth", "Push notifications waiting to be sent", registry=r)
        self.webhook_depth = Gauge(
            "doctordesk_webhook_outbox_depth", "Webhook deliveries waiting to be sent (or retried)", registry=r
        )
        self.push_attempts = Counter("doctordesk_push_attempts", "Push notifications handed to the partner", registry=r)
        self.push_failures = Counter(
            "doctordesk_push_failures", "Push attempts that failed (retried or dropped)", ["reason"], registry=r
        )
        self.push_sent = Counter("doctordesk_push_sent", "Push notifications the partner accepted", registry=r)
        self.bus_connected = Gauge("doctordesk_bus_connected", "1 when the shared event bus is connected", registry=r)
        self.chat_send_answers = Counter(
            "doctordesk_chat_send_answers",
            "Answers to chat sends: appended to the sender's page, or the chat rendered again",
            ["how"],
            registry=r,
        )
        self.chat_pages_from_bus = Counter(
            "doctordesk_chat_pages_from_bus",
            "Chat pages another process made, taken from the shared bus to build a send's or poll's answer on",
            registry=r,
        )
        self.polls_from_memory = Counter(
            "doctordesk_polls_from_memory",
            "Unchanged polls answered again from memory, ahead of the framework (web/unchanged_polls.py)",
            registry=r,
        )
        self.poll_renders_waited = Counter(
            "doctordesk_poll_renders_waited",
            "Polls that had to render and waited for one of the process's poll renders to end first "
            "(DOCTORDESK_POLL_RENDERS)",
            registry=r,
        )
        self.request_seconds = Histogram(
            "doctordesk_request_seconds",
            "HTTP request latency (streams excluded)",
            ["method", "route"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
            registry=r,
        )
        self.collector_pauses = Histogram(
            "doctordesk_gc_pause_seconds",
            "Passes of Python's cyclic garbage collector in this process, by generation (2: a full pass over every "
            "object not frozen at start); every request and stream waits meanwhile",
            ["generation"],
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
            registry=r,
        )


class CollectorPauses:
    """A ``gc.callbacks`` entry timing each pass of the collector into ``Metrics.collector_pauses``: two clock reads
    a pass. A pass runs on whichever thread allocated last, holding the interpreter, so passes never overlap."""

    def __init__(self, metrics: Metrics) -> None:
        self._by_generation = [metrics.collector_pauses.labels(str(g)) for g in range(3)]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self._by_generation[info["generation"]].observe(time.perf_counter() - self._started)
