"""The ``doctordesk import`` and ``doctordesk export`` commands' work: reading the file, the progress bar on
stderr, and the report (bad rows on stderr, counts on stdout). ``cli.py`` wires them up.

The report is in the terminal's language (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``: German for
``de_DE.UTF-8``, else English); kinds, field names and the file's own text stay as they are."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from types import TracebackType

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from sqlalchemy.exc import IntegrityError

from doctordesk import i18n
from doctordesk.config import load_settings
from doctordesk.domain.texts import N_, Text
from doctordesk.domain.transfer.import_rows import KIND_ORDER, Kind
from doctordesk.i18n import t
from doctordesk.services.transfer.import_files import FORMATS, ImportFileError, read_rows
from doctordesk.services.transfer.importing import ImportReport, import_rows


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
        self.task = self.bar.add_task(t(language(), name), total=total)

    def advance(self, count: int) -> None:
        if self.task is not None and count:
            self.bar.advance(self.task, count)


def language() -> str:
    """The terminal's language (docs/import.md)."""
    return i18n.from_environment(os.environ)


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
        typer.echo(t(language(), "error: {problem}", problem=exc.in_language(language())), err=True)
        return 1
    settings = load_settings()

    async def run(bar: ProgressBar | None) -> ImportReport:
        db = Database.from_settings(settings)
        try:
            return await import_rows(
                db,
                rows,
                source=str(path),
                now=settings.clock().now(),
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
        message = Text(
            "error: the database changed during the import, nothing written; run it again ({error})", error=exc.orig
        )
        typer.echo(t(language(), message), err=True)
        return 1
    print_report(report, skip_invalid=skip_invalid)
    return 1 if report.bad_rows else 0


def print_report(report: ImportReport, *, skip_invalid: bool) -> None:
    locale = language()
    for bad in report.bad_rows:
        typer.echo(bad.in_language(locale), err=True)
    head = [t(locale, word) for word in (N_("kind"), N_("created"), N_("updated"), N_("unchanged"), N_("invalid"))]
    widths = [max(13, len(head[0]) + 1), *(max(8, len(word)) for word in head[1:])]
    widths[3] = max(widths[3], 10)

    def line(cells: list[str]) -> str:
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return " ".join([cells[0].ljust(widths[0]), *rest])

    typer.echo(line(head))
    for kind in KIND_ORDER:
        c = report.counts.get(kind)
        if c is not None:
            typer.echo(line([kind.value, *(str(n) for n in (c.created, c.updated, c.unchanged, c.invalid))]))
    bad_rows = report.invalid
    if report.bad_rows and not skip_invalid:
        message = Text(
            "nothing written: {count} bad row(s); fix them, or give --skip-invalid to write the rest", count=bad_rows
        )
    elif report.dry_run:
        message = Text("dry run: {count} change(s) checked, nothing written", count=report.changes)
    elif bad_rows:
        message = Text("{count} change(s) written, {bad} bad row(s) skipped", count=report.changes, bad=bad_rows)
    else:
        message = Text("{count} change(s) written", count=report.changes)
    typer.echo(t(locale, message))


def run_export(kind: Kind | None, *, file_format: str | None, output: Path | None) -> int:
    """Export one kind (CSV or JSON) or every kind (JSON) to ``output`` or stdout."""
    from doctordesk.services.transfer.exporting import export_rows, to_csv, to_json
    from doctordesk.store.db import Database

    fmt = file_format or (output.suffix.lower().lstrip(".") if output else "") or "json"
    if fmt not in FORMATS:
        typer.echo(t(language(), "error: unknown format {format} (csv or json)", format=repr(fmt)), err=True)
        return 2
    if fmt == "csv" and kind is None:
        typer.echo(t(language(), "error: CSV holds one kind: give --kind"), err=True)
        return 2
    kinds = [kind] if kind is not None else list(KIND_ORDER)
    settings = load_settings()

    async def run() -> str:
        db = Database.from_settings(settings)
        try:
            rows = await export_rows(db, kinds=kinds, now=settings.clock().now())
        finally:
            await db.dispose()
        return to_csv(kinds[0], rows[kinds[0]]) if fmt == "csv" else to_json(rows)

    text = asyncio.run(run())
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_bytes(text.encode("utf-8"))
    return 0
