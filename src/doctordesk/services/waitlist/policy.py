"""The clinic's waitlist policy, read in one place: today from the deployment's settings (``DOCTORDESK_WAITLIST_*``,
docs/operations.md), later from a clinic settings store without any caller changing."""

from __future__ import annotations

from doctordesk.config import Settings
from doctordesk.domain.waitlist.rules import Mode, Policy


def policy(settings: Settings) -> Policy:
    """The policy in force: the mode, how long a one-at-a-time offer stays open, and whether direct moves are
    allowed."""
    return Policy(
        mode=Mode(settings.waitlist_mode),
        offer_minutes=settings.waitlist_offer_minutes,
        direct_move=settings.waitlist_direct_move,
    )
