"""The ``doctordesk`` command: serve, migrate, seed-demo, create-user, import, export (and the feature commands)."""

from __future__ import annotations

import asyncio
import getpass
from pathlib import Path
from typing import Any

import typer

from doctordesk.config import Settings, SettingsError, load_settings
from doctordesk.domain.errors import DomainError
from doctordesk.domain.roles import Role
from doctordesk.domain.transfer.import_rows import Kind
from doctordesk.store.private_files import private_umask

app = typer.Typer(help="doctordesk: the service behind a doctor-facing app.", no_args_is_help=True)


@app.callback()
def private_by_default() -> None:
    """Every command's files (the database, its WAL and SHM, keys, sockets, exports) are 0600, directories 0700
    (docs/operations.md#file-permissions)."""
    private_umask()


def checked_settings(*, warn: bool = True) -> Settings:
    """The settings from the environment; an invalid one stops the command with a message naming it (exit 2)."""
    try:
        return load_settings(warn=warn)
    except SettingsError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


# How long `serve` lets requests in flight finish after SIGTERM before it closes what is still open (streams).
SHUTDOWN_GRACE_SECONDS = 5


@app.command()
def serve(
    host: str = typer.Option(None, help="Address to bind (default: DOCTORDESK_HOST or 127.0.0.1)"),
    port: int = typer.Option(None, help="Port (default: DOCTORDESK_PORT or 8000)"),
    workers: int = typer.Option(1, min=1, help="Worker processes (without Redis they share a bus on this host)"),
) -> None:
    """Serve the API, the screens, the real-time stream and the web app."""
    import uvicorn

    # Checked here so a wrong value stops `serve` with its message; the app warns about unknown variables as it
    # starts (in every worker process).
    config = checked_settings(warn=False)
    if workers > 1 and not config.redis_url and not config.bus_socket:
        _start_shared_bus(config)
    options = server_options(config, host=host, port=port)
    if workers == 1:
        uvicorn.run("doctordesk.app:create_app", **options)
        return
    from doctordesk.supervisor import Supervisor

    # Each worker on a listening socket of its own where the kernel spreads connections across them (supervisor.py).
    served = uvicorn.Config("doctordesk.app:create_app", workers=workers, **options)
    status = Supervisor(served, workers=workers).run()
    if status:
        raise typer.Exit(status)


def server_options(config: Settings, *, host: str | None = None, port: int | None = None) -> dict[str, Any]:
    """uvicorn's options for `serve` (one worker or each of several)."""
    from uvicorn.config import LOGGING_CONFIG

    from doctordesk.web.access_log import log_config
    from doctordesk.web.http_protocol import PROTOCOL

    return {
        "factory": True,
        "host": host or config.host,
        "port": port or config.port,
        # uvicorn's httptools protocol, holding less per open stream (web/http_protocol.py).
        "http": PROTOCOL,
        "log_level": "info",
        "access_log": config.access_log,
        # The access log without the secrets some addresses carry (web/access_log.py).
        "log_config": log_config(LOGGING_CONFIG),
        "proxy_headers": True,
        "forwarded_allow_ips": config.forwarded_allow_ips,
        # Open streams never end by themselves: without a limit, SIGTERM waited for them until the supervisor
        # killed the process. Clients reconnect (to another worker or instance) and poll meanwhile.
        "timeout_graceful_shutdown": SHUTDOWN_GRACE_SECONDS,
    }


def _start_shared_bus(config: Settings) -> None:
    """Several workers without Redis: run their event bus in this (supervising) process, on a Unix socket in the
    data directory, and tell the workers where (they inherit the environment). Exit 2 when it cannot start."""
    import os

    from doctordesk.realtime.broker import BrokerError, start_in_thread

    try:
        path = start_in_thread(config.data_dir / "bus.sock")
    except (BrokerError, OSError) as exc:
        typer.echo(f"error: several workers need a shared event bus: {exc}", err=True)
        raise typer.Exit(2) from None
    os.environ["DOCTORDESK_BUS_SOCKET"] = str(path)


@app.command()
def migrate() -> None:
    """Create or upgrade the database schema (every migration head)."""
    from doctordesk.store.db import create_engine
    from doctordesk.store.migrate import upgrade

    settings = checked_settings()

    async def run() -> None:
        # A waiting engine (not the service's writer): a migration waits for a running service's transactions.
        engine = create_engine(settings.database_url, lock_timeout_ms=settings.db_lock_timeout_ms)
        try:
            await upgrade(engine)
        finally:
            await engine.dispose()

    asyncio.run(run())
    typer.echo("database is up to date")


@app.command("seed-demo")
def seed_demo(if_empty: bool = typer.Option(False, "--if-empty", help="Do nothing when users exist")) -> None:
    """Fill the database with the demo clinic (accounts with password 'demo')."""
    from doctordesk.domain.accounts.passwords import Passwords
    from doctordesk.store.db import Database
    from doctordesk.store.seed import demo as seed

    settings = checked_settings()

    async def run() -> bool:
        db = Database.from_settings(settings)
        try:
            async with db.transaction() as session:
                if not await seed.is_empty(session):
                    if if_empty:
                        return False
                    raise typer.BadParameter("the database already has users; seed an empty database")
                passwords = Passwords(time_cost=settings.argon2_time_cost, memory_kib=settings.argon2_memory_kib)
                await seed.seed_demo(session, passwords, settings.clock().now())
            return True
        finally:
            await db.dispose()

    typer.echo("demo data created" if asyncio.run(run()) else "database not empty: demo data left alone")


@app.command("create-user")
def create_user(
    username: str = typer.Argument(..., help="Login name"),
    role: Role = typer.Option(Role.DOCTOR, help="doctor, support, patient or admin"),
    name: str = typer.Option(None, help="Display name (default: the username)"),
    password: str = typer.Option(None, help="Password (asked for when not given)"),
) -> None:
    """Create a user account (audited, by the service)."""
    from doctordesk.realtime.bus import MemoryBus
    from doctordesk.runtime import Runtime
    from doctordesk.screens.state import Revisions, ScreenStates
    from doctordesk.services.admin import command_line
    from doctordesk.store.db import Database

    secret = password or getpass.getpass("Password: ")
    settings = checked_settings()

    async def run() -> int:
        # What the service's door needs, no more: nothing listens to this process's bus.
        rt = Runtime(
            settings=settings,
            db=Database.from_settings(settings),
            bus=MemoryBus(),
            clock=settings.clock(),
            screens=ScreenStates(Revisions()),
        )
        try:
            return await command_line.create_user(
                rt, username=username, role=role, display_name=name or username, password=secret
            )
        finally:
            await rt.db.dispose()

    try:
        user_id = asyncio.run(run())
    except DomainError as exc:
        problems = "; ".join(f"{k}: {v}" for k, v in exc.fields.items()) or exc.message
        typer.echo(f"error: {problems}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"created user {username} (id {user_id})")


@app.command("import")
def import_file(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True, help="A .csv or .json file"),
    kind: Kind = typer.Option(None, help="The kind of rows (default: from the file name or the JSON document)"),
    file_format: str = typer.Option(None, "--format", help="csv or json (default: from the file name)"),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Write the good rows even when some are bad"),
    dry_run: bool = typer.Option(False, "--dry-run", help="Check and count everything, write nothing"),
    progress: bool = typer.Option(None, "--progress/--no-progress", help="Progress bar (default: on a terminal)"),
) -> None:
    """Import locations, doctors, hours, patients, policies or appointments, upserting by external id (docs/import.md).
    Every bad row is reported with its line; nothing is written when any row is bad (unless --skip-invalid)."""
    from doctordesk.cli_transfer import run_import

    status = run_import(
        file, kind=kind, file_format=file_format, skip_invalid=skip_invalid, dry_run=dry_run, progress=progress
    )
    if status:
        raise typer.Exit(status)


@app.command("export")
def export_file(
    kind: Kind = typer.Option(None, help="One kind (required for CSV; default: every kind, as JSON)"),
    file_format: str = typer.Option(None, "--format", help="csv or json (default: from --output's name, else json)"),
    output: Path = typer.Option(None, "--output", "-o", help="File to write (default: standard output)"),
) -> None:
    """Export rows in the shapes import reads, so export then import round-trips (docs/import.md)."""
    from doctordesk.cli_transfer import run_export

    status = run_export(kind, file_format=file_format, output=output)
    if status:
        raise typer.Exit(status)


@app.command("new-secrets-key")
def new_secrets_key() -> None:
    """Print a new random key for DOCTORDESK_SECRETS_KEY or the key file (docs/operations.md#secrets-at-rest)."""
    from doctordesk.store.secrets.encryption import new_key

    typer.echo(new_key())


@app.command("reencrypt-secrets")
def reencrypt_secrets() -> None:
    """Encrypt every stored secret with the first secrets key: those stored in plain text before encryption and
    those encrypted with an older key, which can be retired afterwards (docs/operations.md#secrets-at-rest). Exit 1
    when some value opens with none of the keys (named, and left as it is)."""
    from doctordesk.store.db import Database
    from doctordesk.store.secrets.encryption import SecretKeyError
    from doctordesk.store.secrets.rows import ColumnReport, reencrypt

    settings = checked_settings()

    async def run() -> list[ColumnReport]:
        db = Database.from_settings(settings)
        try:
            return await reencrypt(db)
        finally:
            await db.dispose()

    try:
        reports = asyncio.run(run())
    except SecretKeyError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    unreadable = False
    for r in reports:
        typer.echo(r.summary())
        if r.unreadable:
            unreadable = True
            typer.echo(f"error: {r.column}: no key opens the rows {', '.join(r.unreadable)}", err=True)
    if unreadable:
        raise typer.Exit(1)


@app.command()
def worker(
    once: bool = typer.Option(False, "--once", help="Send what is due now, then exit"),
) -> None:
    """Run the background tasks a server can leave out (each ``DOCTORDESK_*_IN_PROCESS``): the reminders before
    appointments, the waitlist's rounds, push notifications, webhook deliveries and patients' mail from their
    outboxes, and FHIR bulk exports (run several on PostgreSQL; set those settings to false on the servers then).
    Push runs only when a partner is configured, mail only when an SMTP relay is."""
    from doctordesk.bootstrap import Role, assemble
    from doctordesk.realtime.bus import MemoryBus
    from doctordesk.store.secrets.encryption import SecretKeyError

    settings = checked_settings()
    # With --once nothing listens: no bus beyond the process. Otherwise, with Redis the servers' events wake the
    # tasks at once (they poll as well).
    process = assemble(settings, role=Role.WORKER, bus=MemoryBus() if once else None)

    async def run() -> None:
        try:
            if once:
                await process.check()
            else:
                await process.start()
        except SecretKeyError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        try:
            if once:
                await process.tasks.drain()  # in the registry's order: reminders queued before mail and push
            else:
                await _until_signalled()
        finally:
            await process.stop()

    asyncio.run(run())


async def _until_signalled() -> None:
    """Wait for SIGTERM or SIGINT."""
    import signal

    stop = asyncio.Event()
    running = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        running.add_signal_handler(sig, stop.set)
    await stop.wait()


if __name__ == "__main__":
    app()
