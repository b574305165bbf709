"""a session's device as two names, put into words where it is shown

Revision ID: accounts_0004
Revises: accounts_0003
Create Date: 2026-11-29

The security page said a session's device in English whatever its reader's language ("Firefox on Windows" on a
German page), because accounts_0003 stored the description in one piece. The client's and the system's names are now
stored apart (``device_client``, ``device_system``) and joined in the reader's language when the page is written
(docs/accounts.md#which-device-a-session-is).

Rows written before are split here when that is certain: a description with exactly one " on " between two names,
short enough not to have been cut at 120 characters (at most 118). Any other (one name alone, which reads the same
in every language; a cut or unclear one) stays in ``device`` and is shown as it is. The downgrade writes the
description back in one piece for rows that have only the names.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "accounts_0004"
down_revision = "accounts_0003"
branch_labels = None
depends_on = None

_JOIN = " on "
# accounts_0003 cut a description at 120 characters and then dropped a trailing space: one of 119 or 120 may lack
# the end of its system's name.
_SURELY_WHOLE = 118

_tokens = sa.table(
    "access_tokens",
    sa.column("id", sa.BigInteger()),
    sa.column("device", sa.String(120)),
    sa.column("device_client", sa.String(120)),
    sa.column("device_system", sa.String(120)),
)


def _split(whole: str) -> tuple[str, str] | None:
    if len(whole) > _SURELY_WHOLE or whole.count(_JOIN) != 1:
        return None
    client, system = (part.strip() for part in whole.split(_JOIN))
    return (client, system) if client and system else None


def upgrade() -> None:
    op.add_column("access_tokens", sa.Column("device_client", sa.String(length=120), nullable=True))
    op.add_column("access_tokens", sa.Column("device_system", sa.String(length=120), nullable=True))
    bind = op.get_bind()
    found = bind.execute(sa.select(_tokens.c.id, _tokens.c.device).where(_tokens.c.device.like(f"%{_JOIN}%"))).all()
    for token_id, whole in found:
        parts = _split(whole)
        if parts is not None:
            bind.execute(
                sa.update(_tokens)
                .where(_tokens.c.id == token_id)
                .values(device_client=parts[0], device_system=parts[1], device=None)
            )


def downgrade() -> None:
    client, system = _tokens.c.device_client, _tokens.c.device_system
    joined = sa.case(
        (sa.and_(client.is_not(None), system.is_not(None)), sa.func.substr(client + _JOIN + system, 1, 120)),
        else_=sa.func.coalesce(client, system),
    )
    op.get_bind().execute(sa.update(_tokens).where(_tokens.c.device.is_(None)).values(device=joined))
    with op.batch_alter_table("access_tokens") as batch:
        batch.drop_column("device_system")
        batch.drop_column("device_client")
