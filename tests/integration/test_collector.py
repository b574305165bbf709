"""A running service keeps the cyclic collector's full passes rare and its startup objects out of them (thousands
of open streams would otherwise make each full pass a pause of hundreds of milliseconds; docs/realtime.md)."""

from __future__ import annotations

import gc

from doctordesk.app import FULL_COLLECTION_EVERY


async def test_a_started_app_freezes_startup_objects_and_spaces_out_full_collections(app) -> None:
    assert gc.get_threshold()[2] == FULL_COLLECTION_EVERY
    assert gc.get_freeze_count() > 0


async def test_a_started_app_counts_the_collectors_passes_by_generation(app) -> None:
    metrics = app.state.runtime.metrics

    def full_passes() -> float:
        return metrics.registry.get_sample_value("doctordesk_gc_pause_seconds_count", {"generation": "2"}) or 0.0

    before = full_passes()
    gc.collect()
    assert full_passes() == before + 1
