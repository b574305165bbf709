"""The web app's sources: no HTML parsing of data, no inline script or style, nothing to build."""

from __future__ import annotations

import re
from pathlib import Path

import doctordesk.web

STATIC = Path(doctordesk.web.__file__).parent / "static"
SCRIPTS = sorted((STATIC / "js").glob("*.js"))


def test_the_web_app_is_plain_modules_served_as_they_are():
    assert (STATIC / "index.html").is_file() and (STATIC / "app.css").is_file()
    assert {p.name for p in SCRIPTS} >= {"main.js", "api.js", "render.js", "patch.js", "screen.js", "sync.js"}


def test_every_module_a_script_imports_is_a_file_of_the_app():
    """No build step resolves imports: each relative import names a module served next to it."""
    for path in SCRIPTS:
        for target in re.findall(r'^import .* from "\./([\w-]+\.js)";$', path.read_text(), flags=re.M):
            assert (STATIC / "js" / target).is_file(), f"{path.name} imports {target}"


def test_no_script_parses_html_from_strings():
    forbidden = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment")
    for path in SCRIPTS:
        assert not forbidden.search(path.read_text()), path.name


def test_no_script_evaluates_strings():
    forbidden = re.compile(r"\beval\(|new Function\(|setTimeout\(\s*[\"'`]")
    for path in SCRIPTS:
        assert not forbidden.search(path.read_text()), path.name


def test_the_page_has_no_inline_script_style_or_handlers():
    html = (STATIC / "index.html").read_text()
    assert re.search(r"<script(?![^>]*\bsrc=)", html) is None
    assert "style=" not in html and "<style" not in html
    assert re.search(r"\son[a-z]+=", html) is None


def test_the_token_is_never_put_in_a_url():
    for path in SCRIPTS:
        text = path.read_text()
        assert not re.search(r"[?&](access_)?token=", text), path.name


def test_every_text_of_the_shell_is_served_in_the_readers_language():
    """The shell's words — ``data-i18n``/``data-i18n-label`` in index.html and ``t("...")`` in the modules — are
    all in the list ``GET /i18n/texts`` serves (and so in the catalog): none stays English in German."""
    from doctordesk.i18n.shell import SHELL_TEXTS

    html = (STATIC / "index.html").read_text()
    marked = set(re.findall(r'data-i18n(?:-label)?="([^"]+)"', html))
    for path in SCRIPTS:
        marked |= set(re.findall(r'\bt\("([^"]+)"\)', path.read_text()))
    assert {"Set your password", "Copied", "Remove attachment", "Sign in"} <= marked  # the scan finds them
    labels = re.findall(r'aria-label="([^"]+)"(?![^>]*data-i18n-label)', html)
    assert labels == [], f"aria-labels without data-i18n-label: {labels}"
    assert sorted(marked - set(SHELL_TEXTS)) == []
