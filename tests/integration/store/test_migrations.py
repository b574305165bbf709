"""Migrations from empty on SQLite and PostgreSQL: up to every head, down to base, up again; and the models match
the migrations exactly, so a feature's table change without its migration fails here."""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Text, column, insert, inspect, table, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from doctordesk.store.migrate import alembic_config, current_heads, downgrade, upgrade
from doctordesk.store.schema import metadata
from doctordesk.store.secrets.encryption import EncryptedText
from tests.support import databases


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def empty_engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """An engine on an empty database: a new SQLite file, or a new PostgreSQL schema (the shared test database's
    public schema stays untouched)."""
    if request.param == "sqlite":
        from doctordesk.store.db import create_engine

        engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}")
        yield engine
        await engine.dispose()
        return
    url = databases.postgres_url()
    schema = f"migration_{secrets.token_hex(4)}"
    admin = create_async_engine(url)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = create_async_engine(url, connect_args={"server_settings": {"search_path": schema}})
    try:
        yield engine
    finally:
        await engine.dispose()
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


def _heads() -> set[str]:
    return set(ScriptDirectory.from_config(alembic_config()).get_heads())


async def _tables(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as conn:
        return set(await conn.run_sync(lambda c: inspect(c).get_table_names())) - {"alembic_version"}


async def _drift(engine: AsyncEngine) -> list[Any]:
    def compare(conn: Any) -> list[Any]:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": False, "render_as_batch": True}
        )
        return list(compare_metadata(context, metadata))

    async with engine.connect() as conn:
        return await conn.run_sync(compare)


async def test_migrations_go_up_to_every_head_down_to_base_and_up_again(empty_engine):
    assert await _tables(empty_engine) == set()
    await upgrade(empty_engine)
    assert await current_heads(empty_engine) == _heads()
    assert await _tables(empty_engine) == set(metadata.tables)
    await downgrade(empty_engine)
    assert await _tables(empty_engine) == set()
    assert await current_heads(empty_engine) == set()
    await upgrade(empty_engine)
    assert await _tables(empty_engine) == set(metadata.tables)


async def test_the_models_match_the_migrations(empty_engine):
    await upgrade(empty_engine)
    drift = await _drift(empty_engine)
    assert drift == [], "models and migrations differ; write the migration for: " + repr(drift)


async def test_upgrading_twice_changes_nothing(empty_engine):
    await upgrade(empty_engine)
    await upgrade(empty_engine)
    assert await current_heads(empty_engine) == _heads()


def test_every_feature_migration_branches_from_the_core_with_its_own_revision_id():
    script = ScriptDirectory.from_config(alembic_config())
    revisions = list(script.walk_revisions())
    assert len({r.revision for r in revisions}) == len(revisions)
    bases = [r for r in revisions if r.down_revision is None]
    assert [r.revision for r in bases] == ["0001"]


def test_the_migration_environment_refuses_to_run_without_a_connection():
    from alembic import command

    with pytest.raises(RuntimeError, match="doctordesk migrate"):
        command.upgrade(alembic_config(), "heads")
    assert os.path.isdir(alembic_config().get_main_option("script_location"))


async def test_secrets_stored_before_encryption_keep_their_rows_and_those_referring_to_them(empty_engine):
    # secrets_0001 widens the secret columns; on SQLite without copying the tables, whose drop would take the SSO
    # links and webhook deliveries along (ON DELETE CASCADE).
    await upgrade(empty_engine, "mfa_0001")
    await upgrade(empty_engine, "webhooks_0001")
    at = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
    rows: dict[str, dict[str, Any]] = {
        "users": {"id": 1, "username": "d", "password_hash": "x", "role": "doctor", "display_name": "D",
                  "active": True, "created_at": at},
        "totp_secrets": {"user_id": 1, "secret": "JBSWY3DPEHPK3PXP", "created_at": at},
        "sso_providers": {"id": 1, "slug": "c", "name": "C", "issuer": "https://op", "client_id": "i",
                          "client_secret": "s" * 255, "match_claim": "email", "match_field": "username",
                          "role_map": {}, "create_users": False, "active": True, "created_at": at, "updated_at": at},
        "sso_links": {"id": 1, "provider_id": 1, "subject": "sub", "user_id": 1, "created_at": at},
        "webhook_endpoints": {"id": 1, "url": "https://h", "description": "", "event_types": [],
                              "include_content": False, "secret": "whsec_" + "a" * 44, "previous_secret": None,
                              "enabled": True, "created_at": at, "updated_at": at},
        "webhook_deliveries": {"id": 1, "message_id": "msg_1", "endpoint_id": 1, "event_type": "t", "payload": "{}",
                               "created_at": at, "status": "pending", "attempts": 0, "next_attempt_at": at,
                               "replays": 0},
    }  # fmt: skip
    async with empty_engine.begin() as conn:
        for name, values in rows.items():
            # Written as the version before did: the secret columns as plain text.
            columns = [
                column(c.name, Text() if isinstance(c.type, EncryptedText) else c.type)
                for c in metadata.tables[name].columns
                if c.name in values
            ]
            await conn.execute(insert(table(name, *columns)).values(values))
    await upgrade(empty_engine)
    async with empty_engine.connect() as conn:
        for name in rows:
            assert (await conn.execute(text(f"SELECT count(*) FROM {name}"))).scalar_one() == 1, name
        kept = (await conn.execute(text("SELECT secret FROM totp_secrets"))).scalar_one()
        assert kept == "JBSWY3DPEHPK3PXP"
        if empty_engine.dialect.name == "sqlite":
            assert (await conn.execute(text("PRAGMA integrity_check"))).scalar_one() == "ok"
            assert (await conn.execute(text("PRAGMA foreign_key_check"))).all() == []
    assert await _drift(empty_engine) == []


async def test_session_devices_stored_whole_are_split_where_certain_and_joined_again_on_the_way_down(empty_engine):
    # accounts_0004 keeps a session's client and system apart, to be put into words in the reader's language.
    await upgrade(empty_engine, "accounts_0003")
    at = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
    long = "A" * 110 + " on Mac OS"  # 120 characters: may have been cut, stays whole
    before = {
        1: "Firefox on Windows",
        2: "curl",  # one name alone: the same in every language
        3: "Windows",
        4: "Foo on Bar on Baz",  # which " on " joins the two is not certain
        5: long,
        6: None,
    }
    async with empty_engine.begin() as conn:
        await conn.execute(
            text("INSERT INTO users (id, username, password_hash, role, display_name, active, created_at) "
                 "VALUES (1, 'd', 'x', 'doctor', 'D', true, :at)"),
            {"at": at},
        )  # fmt: skip
        for token_id, device in before.items():
            await conn.execute(
                text("INSERT INTO access_tokens (id, token_hash, user_id, created_at, expires_at, device) "
                     "VALUES (:id, :hash, 1, :at, :at, :device)"),
                {"id": token_id, "hash": f"{token_id:064d}", "at": at, "device": device},
            )  # fmt: skip
    await upgrade(empty_engine)
    query = text("SELECT id, device_client, device_system, device FROM access_tokens ORDER BY id")
    async with empty_engine.connect() as conn:
        after = {row[0]: tuple(row[1:]) for row in (await conn.execute(query)).all()}
    assert after == {
        1: ("Firefox", "Windows", None),
        2: (None, None, "curl"),
        3: (None, None, "Windows"),
        4: (None, None, "Foo on Bar on Baz"),
        5: (None, None, long),
        6: (None, None, None),
    }
    assert await _drift(empty_engine) == []

    async with empty_engine.begin() as conn:  # written after the upgrade: the names only
        await conn.execute(
            text("INSERT INTO access_tokens (id, token_hash, user_id, created_at, expires_at, device_client, "
                 "device_system) VALUES (7, :hash, 1, :at, :at, 'Mobile Safari', 'iOS'), "
                 "(8, :other, 1, :at, :at, NULL, 'Android')"),
            {"hash": "7" * 64, "other": "8" * 64, "at": at},
        )  # fmt: skip
    await downgrade(empty_engine, "accounts_0004@-1")
    async with empty_engine.connect() as conn:
        columns = await conn.run_sync(lambda c: {col["name"] for col in inspect(c).get_columns("access_tokens")})
        assert not {"device_client", "device_system"} & columns
        down = dict((await conn.execute(text("SELECT id, device FROM access_tokens ORDER BY id"))).all())
    assert down == {**before, 7: "Mobile Safari on iOS", 8: "Android"}
    await upgrade(empty_engine)
    assert await current_heads(empty_engine) == _heads()
