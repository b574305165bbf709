"""Creating accounts (the CLI and tests)."""

from __future__ import annotations

from sqlalchemy import select

from doctordesk.config import Settings
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import check_text
from doctordesk.domain.names import check_name
from doctordesk.domain.roles import Role
from doctordesk.domain.texts import N_, Text
from doctordesk.store.db import Database
from doctordesk.store.tables import DoctorProfile, Patient, User

MAX_DISPLAY_NAME = 128  # the column's width


async def create_user(
    db: Database, settings: Settings, *, username: str, role: Role, display_name: str, password: str
) -> int:
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
    hashed = Passwords(time_cost=settings.argon2_time_cost, memory_kib=settings.argon2_memory_kib).hash(password)
    now = settings.clock().now()
    async with db.transaction() as session:
        if await session.scalar(select(User.id).where(User.username == username)) is not None:
            raise ValidationFailed(fields={"username": N_("Already taken.")})
        user = User(
            username=username,
            password_hash=hashed,
            role=role.value,
            display_name=display_name.strip(),
            active=True,
            created_at=now,
        )
        session.add(user)
        await session.flush()
        if role is Role.DOCTOR:
            session.add(DoctorProfile(user_id=user.id, specialty="General practice", can_prescribe=True))
        elif role is Role.PATIENT:
            session.add(Patient(user_id=user.id, name=user.display_name))
        return user.id
