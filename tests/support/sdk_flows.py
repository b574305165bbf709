"""Product flows driven through the SDK, shared by the end-to-end tests."""

from __future__ import annotations

from collections.abc import Callable

from doctordesk.client import Client, Screen


def awaiting_decision(screen: Screen) -> list[int]:
    """The appointments in the list's "Awaiting your decision" section."""
    rows = screen.element("needs-decision").get("children", [])
    return [int(r["props"]["appointment"]) for r in rows if r["type"] == "Row"]


async def approve_one_as(url: str, username: str, candidates: list[int]) -> int:
    """Another client (the doctor on another device) approves one of the appointments through its Review and
    Approve screen (the first whose Approve is enabled: some need a disclaimer or insurer data blocks approval)."""
    async with Client(url, realtime=False) as other:
        await other.login(username, "demo")
        for appointment_id in candidates:
            review = await other.open(f"/profile/appointments/{appointment_id}/approve")
            if review.element("approve").get("enabled", True):
                await review.activate("approve")
                return appointment_id
            await review.close()
    raise AssertionError("no appointment could be approved")


def status_is(appointment_id: int, value: str) -> Callable[[Screen], bool]:
    def check(screen: Screen) -> bool:
        found = screen.find(f"status-{appointment_id}")
        return found is not None and (found.get("props") or {}).get("status") == value

    return check
