"""The layout holds (docs/architecture.md): every import runs down the layers or stays in its layer, no modules
import each other in a circle, no package folder holds more than 25 modules, no module more than 500 lines, no
class more than 300 and no function more than 80; every folder of modules is a package; bench/ and tests/support/
keep the module size too and the app never imports them; the docs' ``Code:`` lines name files that exist.

The checks themselves are in tests/unit/architecture/; the tests at the end run each new one on a small made-up
tree with a fault in it, to show it catches what it is for."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import doctordesk
from tests.unit.architecture import checks
from tests.unit.architecture.imports import graph as import_graph
from tests.unit.architecture.imports import modules_under

SOURCE = Path(doctordesk.__file__).parent
REPO = SOURCE.parent.parent
MODULES = modules_under(SOURCE, "doctordesk")
# Beside the app: the benchmarks and the tests' shared helpers. They may import the app; the app never imports them.
BESIDE = {"bench": REPO / "bench", "tests.support": REPO / "tests" / "support"}
BESIDE_MODULES = {name: path for package, root in BESIDE.items() for name, path in modules_under(root, package).items()}
# The floors, from the ground up: a module imports from its own floor or the ones below, never above.
FLOORS = {
    "domain": 0,
    "config": 1,
    "i18n": 1,
    "caches": 1,
    "store": 2,
    "screens": 2,
    "realtime": 3,
    "runtime": 4,
    "client": 4,
    "services": 5,
    "workers": 6,
    "cli_transfer": 6,
    "web": 7,
    "bootstrap": 8,
    "app": 9,
    "supervisor": 10,
    "cli": 10,
}


@cache
def graph() -> dict[str, set[str]]:
    """Who imports whom in the app, imports of bench/ and tests/ counted too (built by the first test that asks,
    not when the tests are collected)."""
    return import_graph(MODULES, {*MODULES, *modules_under(REPO / "tests", "tests"), *BESIDE_MODULES})


def _floor(module: str) -> int | None:
    parts = module.split(".")
    return FLOORS.get(parts[1]) if len(parts) > 1 and parts[0] == "doctordesk" else None


def test_every_part_has_a_floor():
    assert {m.split(".")[1] for m in MODULES if m.count(".")} <= set(FLOORS)


def test_no_import_runs_up_a_floor():
    assert checks.upward(graph(), _floor) == []


def test_no_modules_import_each_other_in_a_circle():
    assert checks.circles(graph()) == []


def test_no_package_folder_holds_more_than_25_modules():
    assert checks.crowded_folders(SOURCE) == {}


def test_no_module_is_longer_than_500_lines():
    assert checks.long_modules(MODULES.values(), root=SOURCE) == {}


MAX_FUNCTION_LINES = 80
MAX_CLASS_LINES = 300
# Migrations are one DDL list each, read top to bottom: their upgrade() is as long as the schema step.
NOT_SPLIT = ("store/migrations/",)
# Alembic runs env.py and versions/*.py by path; they are not imported as a package.
LOADED_BY_PATH = ("store/migrations",)


def test_no_function_is_longer_than_80_lines():
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    long = checks.long_definitions(
        MODULES.values(), root=SOURCE, kinds=functions, limit=MAX_FUNCTION_LINES, skip=NOT_SPLIT
    )
    assert long == {}


def test_no_class_is_longer_than_300_lines():
    long = checks.long_definitions(MODULES.values(), root=SOURCE, kinds=(ast.ClassDef,), limit=MAX_CLASS_LINES)
    assert long == {}


def test_every_folder_of_modules_is_a_package():
    assert checks.folders_without_init(SOURCE, loaded_by_path=LOADED_BY_PATH) == []
    assert [f for root in BESIDE.values() for f in checks.folders_without_init(root)] == []


def test_no_bench_or_test_support_module_is_longer_than_500_lines():
    assert checks.long_modules(BESIDE_MODULES.values(), root=REPO) == {}


def test_the_app_imports_nothing_from_bench_or_the_tests():
    assert checks.reaching(graph(), into=("bench", "tests")) == []


DOCS = REPO / "docs"
# Docs that are not about one feature's code: how to build and run, the measurements.
NOT_FEATURES = {"development.md", "benchmarks.md"}


def test_every_code_line_names_paths_that_exist():
    missing = {d.name: m for d in sorted(DOCS.glob("*.md")) if (m := checks.missing_paths(d, repo=REPO))}
    assert missing == {}


def test_every_feature_doc_has_a_code_line():
    without = {d.name for d in DOCS.glob("*.md") if not checks.has_code_line(d.read_text())}
    assert without - NOT_FEATURES == set()


def test_the_checks_see_the_layout():
    assert "doctordesk.services.uow" in graph()["doctordesk.services.review.screen"]
    assert _floor("doctordesk.web.routers.admin.users") == FLOORS["web"]
    assert "bench.common" in BESIDE_MODULES and "tests.support.databases" in BESIDE_MODULES
    # The demo seed loads the feature seeders by name (importlib), a tuple of literal names looped over.
    assert "doctordesk.store.seed.chat" in graph()["doctordesk.store.seed.demo"]
    assert "workers/webhook_dispatcher.py" in checks.code_paths((DOCS / "webhooks.md").read_text())


# Each check on a made-up tree with the fault it is for ------------------------------------------------------------


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _made_up_graph(root: Path, package: str = "app") -> dict[str, set[str]]:
    modules = modules_under(root / package, package)
    return import_graph(modules, modules)


def test_the_import_check_follows_names_given_to_import_module(tmp_path):
    _write(
        tmp_path / "app",
        {
            "__init__.py": "",
            "a.py": "import importlib\nimportlib.import_module('app.b')\n",
            "b.py": "from importlib import import_module\nimport_module('app.a')\n",
            "c.py": "import importlib\nNAMES = ('app.d',)\nfor n in NAMES:\n    importlib.import_module(n)\n",
            "d.py": "import importlib\nimportlib.import_module(f'app.{1}')\n",
        },
    )
    g = _made_up_graph(tmp_path)
    assert g["app.a"] == {"app.b"} and g["app.c"] == {"app.d"} and "app.a" in g["app.d"]
    assert checks.circles(g) == [["app.a", "app.b"], ["app.c", "app.d"]]


def test_the_import_check_reads_relative_imports_as_the_modules_they_name(tmp_path):
    _write(
        tmp_path / "app",
        {
            "__init__.py": "from . import low\n",
            "low.py": "from .high import x\n",
            "high.py": "x = 1\n",
            "sub/__init__.py": "",
            "sub/deep.py": "from .. import high\nfrom ..low import y\nfrom . import sibling\n",
            "sub/sibling.py": "",
        },
    )
    g = _made_up_graph(tmp_path)
    assert g["app"] == {"app.low"} and g["app.low"] == {"app.high"}
    assert g["app.sub.deep"] == {"app.high", "app.low", "app.sub.sibling"}
    assert checks.upward(g, lambda m: {"app.low": 0, "app.high": 1}.get(m)) == ["app.low -> app.high"]


def test_the_package_check_finds_a_folder_without_init(tmp_path):
    _write(tmp_path, {"__init__.py": "", "ok/__init__.py": "", "ok/a.py": "", "loose/b.py": "", "empty/x.txt": ""})
    _write(tmp_path, {"migrations/env.py": ""})
    assert checks.folders_without_init(tmp_path, loaded_by_path=("migrations",)) == ["loose"]


def test_the_size_check_sees_a_long_bench_or_support_module(tmp_path):
    _write(tmp_path, {"bench/short.py": "x = 1\n", "bench/long.py": "x = 1\n" * 501, "tests/support/s.py": ""})
    files = [*(tmp_path / "bench").glob("*.py"), *(tmp_path / "tests/support").glob("*.py")]
    assert checks.long_modules(files, root=tmp_path) == {"bench/long.py": 501}


def test_the_reach_check_finds_the_app_importing_bench_or_the_tests(tmp_path):
    _write(tmp_path / "app", {"__init__.py": "", "a.py": "import importlib\nimportlib.import_module('bench.x')\n"})
    _write(tmp_path / "app", {"b.py": "from tests.support.y import z\n", "c.py": "from app import a\n"})
    modules = modules_under(tmp_path / "app", "app")
    g = import_graph(modules, {*modules, "bench.x", "tests.support.y"})
    assert checks.reaching(g, into=("bench", "tests")) == ["app.a -> bench.x", "app.b -> tests.support.y"]


def test_the_class_check_finds_a_long_class(tmp_path):
    methods = [f"    def m{i}(self):\n        return {i}\n" for i in range(150)]  # 2 lines each
    _write(
        tmp_path, {"long.py": "class Long:\n" + "".join(methods), "short.py": "class Short:\n" + "".join(methods[1:])}
    )
    long = checks.long_definitions(tmp_path.glob("*.py"), root=tmp_path, kinds=(ast.ClassDef,), limit=300)
    assert long == {"long.py:Long": 301}


def test_the_code_line_check_finds_a_path_that_does_not_exist(tmp_path):
    _write(
        tmp_path, {"src/doctordesk/services/a.py": "", "src/doctordesk/services/fhir/bulk/b.py": "", "tests/t.py": ""}
    )
    doc = tmp_path / "docs" / "feature.md"
    _write(
        tmp_path,
        {
            "docs/feature.md": "# F\n\nIt does things. Code: `services/a.py` (`A`), `services/fhir/` (`bulk/`),\n"
            "`services/a.thing`, `services/gone.py`, `tests/t.py`, `docs/feature.md#f`. Then `not/code.py`.\n\n"
            "More words.\nCode: `services/fhir/c.py`, `bulk/`.\n",
        },
    )
    # `bulk/` is found in a folder the doc named before it (services/fhir/); `not/code.py` is past the sentence.
    assert checks.missing_paths(doc, repo=tmp_path) == ["services/gone.py", "services/fhir/c.py"]
    assert checks.has_code_line(doc.read_text())
    assert not checks.has_code_line("# G\n\nNo code named here.\n")
