"""The clinic's waitlist policy, read in one place: the clinic's settings (the Clinic screen, ``PUT /admin/clinic``;
docs/administration.md#clinic-settings), whose defaults are the deployment's ``DOCTORDESK_WAITLIST_*``
(docs/operations.md)."""

from __future__ import annotations

from doctordesk.domain.waitlist.rules import Policy
from doctordesk.runtime import Runtime
from doctordesk.services.clinic import settings as clinic_settings


async def policy(rt: Runtime) -> Policy:
    """The policy in force: the mode, how long a one-at-a-time offer stays open, and whether direct moves are
    allowed."""
    return clinic_settings.waitlist_policy(await clinic_settings.read(rt))
