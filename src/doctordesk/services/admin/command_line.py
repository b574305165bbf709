"""Creating accounts from the command line (``doctordesk create-user``): the command line's own checks, then the
door every account goes through (``services/admin/users.py`` ``add_user``: one unit of work, audited), as the
command line's system actor."""

from __future__ import annotations

import asyncio

from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import check_text
from doctordesk.domain.names import check_name
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.admin.users import NewUser, add_user

MAX_DISPLAY_NAME = 128  # the column's width
# Who creates an account from the command line: the operator at the server, an admin who is no user (``user_id``
# 0, as a SMART backend service's actor), so the audit trail records the service as its author.
COMMAND_LINE = Actor(
    user_id=0,
    username="system:command-line",
    role=Role.ADMIN,
    display_name="doctordesk create-user",
    system_client="command-line",
)


async def create_user(rt: Runtime, *, username: str, role: Role, display_name: str, password: str) -> int:
    """Create an account as ``doctordesk create-user`` does (a doctor gets a profile, a patient a patient record);
    its id. Audited as ``admin.user-created`` by the service."""
    username = username.strip().lower()
    fields: dict[str, str] = {}
    if not username or len(username) > 64:
        fields["username"] = Text("{low} to {high} characters.", low=1, high=64)
    check_text(fields, "username", username, max_chars=64)
    check_name(fields, "display_name", display_name, max_chars=MAX_DISPLAY_NAME)
    if len(password) < 4:
        fields["password"] = N_("At least 4 characters.")
    check_text(fields, "password", password, max_chars=1024)
    if fields:
        raise ValidationFailed(fields=fields)
    settings = rt.settings
    passwords = Passwords(time_cost=settings.argon2_time_cost, memory_kib=settings.argon2_memory_kib)
    hashed = await asyncio.to_thread(passwords.hash, password)
    new = NewUser(username=username, role=role, display_name=display_name)
    return (await add_user(rt, COMMAND_LINE, new, password_hash=hashed)).id
