"""The catalog's upkeep: every text marked in the code (``_``, ``N_``, ``Text``, ``t``), found with Babel's
extractor, and ``python -m doctordesk.i18n.catalog`` to bring the German catalog up to date (new texts are added
with an empty translation, which the catalog test reports until someone writes it; texts no longer in the code
are dropped)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

from doctordesk import i18n

SOURCE = Path(__file__).resolve().parent.parent  # src/doctordesk
KEYWORDS = {"_": None, "N_": None, "Text": None, "t": (2,)}
# A fixed header date: the file changes only when its texts do.
STAMP = datetime(2026, 11, 24, tzinfo=UTC)
METHODS = [("**/static/**", "ignore"), ("**.py", "python")]


def extract() -> dict[str, list[tuple[str, int]]]:
    """Every msgid in the code, with where it is used (file relative to the package, line)."""
    found: dict[str, list[tuple[str, int]]] = {}
    for filename, lineno, message, _comments, _context in extract_from_dir(
        str(SOURCE), METHODS, keywords=KEYWORDS, comment_tags=(), strip_comment_tags=True
    ):
        if isinstance(message, str) and message:
            found.setdefault(message, []).append((filename, lineno))
    return found


def load(locale: str) -> Catalog:
    with i18n.catalog_path(locale).open("rb") as f:
        return read_po(f, locale=locale)


def update(locale: str = "de") -> tuple[int, int]:
    """Rewrite ``locale``'s catalog with exactly the code's msgids, keeping the translations it had; returns the
    numbers of texts added and dropped."""
    path = i18n.catalog_path(locale)
    old = load(locale) if path.exists() else Catalog(locale=locale)
    new = Catalog(
        locale=locale, project="doctordesk", version="1", fuzzy=False, creation_date=STAMP, revision_date=STAMP
    )
    found = extract()
    for msgid in sorted(found):
        kept = old.get(msgid)
        new.add(msgid, kept.string if kept is not None else "", locations=sorted(set(found[msgid]))[:3])
    added = sum(1 for m in found if old.get(m) is None)
    dropped = sum(1 for m in old if m.id and m.id not in found)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        write_po(f, new, width=120, omit_header=False, sort_output=True, include_lineno=False)
    return added, dropped


if __name__ == "__main__":
    added, dropped = update()
    print(f"German catalog: {added} texts added, {dropped} dropped")
