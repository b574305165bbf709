"""Screen controllers apart from use cases (docs/architecture.md#screen-controllers): a module of ``services/`` is
a screen controller when it is named ``screen.py``, ends in ``_screen.py`` or is ``screen_base.py``; it builds a
screen's page or update set and may call any use case. Every other module of ``services/`` is a use case module and
imports neither ``doctordesk.screens`` nor a screen controller. Every import counts: at module level, inside
functions, relative, and ``importlib.import_module`` with a literal name. A second test feeds the same check a small
made-up tree with offending imports, so a check that finds nothing cannot pass by seeing nothing."""

from __future__ import annotations

from pathlib import Path

import doctordesk
from tests.unit.architecture.imports import imports, modules_under

PACKAGE = Path(doctordesk.__file__).parent


def is_controller(module: str) -> bool:
    """A screen controller by its name: ``screen``, ``*_screen`` or ``screen_base``."""
    last = module.rpartition(".")[2]
    return last in ("screen", "screen_base") or last.endswith("_screen")


def offending_imports(root: Path, package: str) -> dict[str, list[str]]:
    """Use case module of ``<package>.services`` → the screens or screen controllers it imports (sorted)."""
    modules = modules_under(root, package)
    services, screens = f"{package}.services", f"{package}.screens"

    def forbidden(target: str) -> bool:
        if target == screens or target.startswith(f"{screens}."):
            return True
        return target.startswith(f"{services}.") and is_controller(target)

    found: dict[str, list[str]] = {}
    for name, path in modules.items():
        if not name.startswith(f"{services}.") or is_controller(name):
            continue
        bad = sorted(t for t in imports(name, path, modules) if forbidden(t))
        if bad:
            found[name] = bad
    return found


def _listed(found: dict[str, list[str]]) -> str:
    return "\n".join(f"  {name} imports {', '.join(targets)}" for name, targets in sorted(found.items()))


def test_use_case_modules_import_no_screen_and_no_screen_controller() -> None:
    services = [m for m in modules_under(PACKAGE, "doctordesk") if m.startswith("doctordesk.services.")]
    # The scan sees both kinds: a rule over an empty or misnamed tree would hold trivially.
    assert sum(map(is_controller, services)) > 20 and sum(not is_controller(m) for m in services) > 100
    found = offending_imports(PACKAGE, "doctordesk")
    assert not found, (
        "use case modules of services/ import screens or screen controllers (move the page-building part into "
        "the feature's *_screen.py, or the logic the use case needs out of the screen module):\n" + _listed(found)
    )


def test_the_check_finds_a_use_case_importing_a_screen(tmp_path: Path) -> None:
    files = {
        "__init__.py": "",
        "screens/__init__.py": "",
        "screens/protocol.py": "class Page: ...\n",
        "services/__init__.py": "",
        "services/shop/__init__.py": "",
        "services/shop/buying.py": "def buy() -> None:\n    from ..shop import list_screen\n",
        "services/shop/list_screen.py": "from app.screens.protocol import Page\nfrom app.services.shop import buying\n",
        "services/shop/basket.py": "import app.screens.protocol\nfrom . import buying\n",
        "services/shop/fine.py": "from app.services.shop import buying\n",
    }
    for name, text in files.items():
        path = tmp_path / "app" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    found = offending_imports(tmp_path / "app", "app")
    assert found == {
        "app.services.shop.buying": ["app.services.shop.list_screen"],
        "app.services.shop.basket": ["app.screens.protocol"],
    }
