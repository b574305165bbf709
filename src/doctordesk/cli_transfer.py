"""The ``doctordesk import`` and ``doctordesk export`` commands' work: reading the file, the progress bar on
stderr, and the report (bad rows on stderr, counts on stdout). ``cli.py`` wires them up."""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from sqlalchemy.exc import IntegrityError

from doctordesk.config import load_settings
from doctordesk.domain.import_rows import KIND_ORDER, Kind
from doctordesk.services.import_files import FORMATS, ImportFileError, read_rows
from doctordesk.services.importing import ImportReport, import_rows


class ProgressBar:
    """A rich progress bar on stderr, one task per phase (checking, writing)."""

    def __init__(self, *, force: bool) -> None:
        console = Console(stderr=True, force_terminal=force or None)
        self.bar = Progress(
            TextColumn("{task.description:<9}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.task: TaskID | None = None

    def __enter__(self) -> ProgressBar:
        self.bar.start()
        return self

    def __exit__(self, *_exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.bar.stop()

    def phase(self, name: str, total: int) -> None:
        self.task = self.bar.add_task(name, total=total)

    def advance(self, count: int) -> None:
        if self.task is not None and count:
            self.bar.advance(self.task, count)


def show_progress(flag: bool | None) -> bool:
    """--progress / --no-progress, else only when stderr is a terminal."""
    return flag if flag is not None else sys.stderr.isatty()


def run_import(
    path: Path,
    *,
    kind: Kind | None,
    file_format: str | None,
    skip_invalid: bool,
    dry_run: bool,
    progress: bool | None,
) -> int:
    """Import one file; the exit status (0: every row good, 1: a bad row or an unreadable file)."""
    from doctordesk.store.db import Database

    try:
        rows = read_rows(path, kind=kind, file_format=file_format)
    except ImportFileError as exc:
        typer.echo(f"error: {exc}", err=True)
        return 1
    settings = load_settings()

    async def run(bar: ProgressBar | None) -> ImportReport:
        db = Database.from_settings(settings)
        try:
            return await import_rows(
                db,
                rows,
                source=str(path),
                now=datetime.now(UTC),
                skip_invalid=skip_invalid,
                dry_run=dry_run,
                progress=bar,
            )
        finally:
            await db.dispose()

    try:
        if show_progress(progress):
            with ProgressBar(force=bool(progress)) as bar:
                report = asyncio.run(run(bar))
        else:
            report = asyncio.run(run(None))
    except IntegrityError as exc:
        # Another writer took an external id or username between the checks and the writes: all rolled back.
        message = f"error: the database changed during the import, nothing written; run it again ({exc.orig})"
        typer.echo(message, err=True)
        return 1
    print_report(report, skip_invalid=skip_invalid)
    return 1 if report.bad_rows else 0


def print_report(report: ImportReport, *, skip_invalid: bool) -> None:
    for bad in report.bad_rows:
        typer.echo(str(bad), err=True)
    typer.echo(f"{'kind':<13} {'created':>8} {'updated':>8} {'unchanged':>10} {'invalid':>8}")
    for kind in KIND_ORDER:
        c = report.counts.get(kind)
        if c is not None:
            typer.echo(f"{kind.value:<13} {c.created:>8} {c.updated:>8} {c.unchanged:>10} {c.invalid:>8}")
    bad_rows = len({(b.kind, b.line) for b in report.bad_rows})
    if report.bad_rows and not skip_invalid:
        typer.echo(f"nothing written: {bad_rows} bad row(s); fix them, or give --skip-invalid to write the rest")
    elif report.dry_run:
        typer.echo(f"dry run: {report.changes} change(s) checked, nothing written")
    else:
        skipped = f", {bad_rows} bad row(s) skipped" if bad_rows else ""
        typer.echo(f"{report.changes} change(s) written{skipped}")


def run_export(kind: Kind | None, *, file_format: str | None, output: Path | None) -> int:
    """Export one kind (CSV or JSON) or every kind (JSON) to ``output`` or stdout."""
    from doctordesk.services.exporting import export_rows, to_csv, to_json
    from doctordesk.store.db import Database

    fmt = file_format or (output.suffix.lower().lstrip(".") if output else "") or "json"
    if fmt not in FORMATS:
        typer.echo(f"error: unknown format {fmt!r} (csv or json)", err=True)
        return 2
    if fmt == "csv" and kind is None:
        typer.echo("error: CSV holds one kind: give --kind", err=True)
        return 2
    kinds = [kind] if kind is not None else list(KIND_ORDER)
    settings = load_settings()

    async def run() -> str:
        db = Database.from_settings(settings)
        try:
            rows = await export_rows(db, kinds=kinds, now=datetime.now(UTC))
        finally:
            await db.dispose()
        return to_csv(kinds[0], rows[kinds[0]]) if fmt == "csv" else to_json(rows)

    text = asyncio.run(run())
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_bytes(text.encode("utf-8"))
    return 0
