"""The HL7 FHIR R4 (4.0.1) models of ``fhir.resources`` 6.1.0, to validate what the FHIR interface produces and
accepts (docs/fhir.md#validation).

``fhir.resources`` gives R4 4.0.1 only in its 6.0–6.1 releases (6.2 moved to R4B 4.3.0; 7 and 8 are R5 with R4B and
STU3 subpackages), and those releases are written against the pydantic 1 API. pydantic 2, which the service uses,
ships that API as ``pydantic.v1``: the models are imported once with ``pydantic`` pointing at it, every module of
the package at once (the package imports its resource modules lazily, and a later import would meet pydantic 2),
and ``pydantic`` is put back at once. The models then run on ``pydantic.v1`` for good; the service never imports
them.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from functools import cache
from types import ModuleType
from typing import Any

_V1_MODULES = (
    "schema", "fields", "class_validators", "error_wrappers", "errors", "types", "main", "utils", "typing",
    "validators", "datetime_parse", "json", "networks", "config", "dataclasses",
)  # fmt: skip


@cache
def r4() -> ModuleType:
    """The ``fhir.resources`` package (R4 4.0.1), every resource module loaded."""
    import pydantic.v1 as v1

    shims = {f"pydantic.{name}": importlib.import_module(f"pydantic.v1.{name}") for name in _V1_MODULES}
    saved = {k: m for k, m in sys.modules.items() if k.split(".")[0] == "pydantic" and not k.startswith("pydantic.v1")}
    try:
        for name in saved:
            del sys.modules[name]
        sys.modules["pydantic"] = v1
        sys.modules.update(shims)
        package = importlib.import_module("fhir.resources")
        for info in pkgutil.iter_modules(package.__path__):
            if not info.ispkg and not info.name.startswith("_"):
                importlib.import_module(f"fhir.resources.{info.name}")
    finally:
        for name in [k for k in sys.modules if k.split(".")[0] == "pydantic" and not k.startswith("pydantic.v1")]:
            del sys.modules[name]
        sys.modules.update(saved)
    assert package.__fhir_version__ == "4.0.1"
    return package


def validate(resource: dict[str, Any]) -> Any:
    """The R4 model of ``resource`` (raises the models' ValidationError when it is not a valid R4 resource).
    A Bundle validates its entries' resources too."""
    return r4().construct_fhir_element(resource["resourceType"], resource)


def validate_all(*resources: dict[str, Any]) -> None:
    for resource in resources:
        validate(resource)
