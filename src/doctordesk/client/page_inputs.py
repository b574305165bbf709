"""Reading a screen's page and setting its inputs as a user would: the part of ``Screen`` that never talks to
the service (forms.py holds the pure functions over the element tree)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from doctordesk.client import forms
from doctordesk.client.forms import FileUpload
from doctordesk.screens.protocol import walk


class PageInputs:
    """The page's elements, read by id or form name, and the values and files set locally on its inputs (sent
    with the next action whose form holds them). ``Screen`` is one."""

    name: str
    elements: list[dict[str, Any]]
    _files: dict[str, FileUpload]  # by input name: the files set on Upload elements
    _edited: set[str]  # ids of inputs whose value was set locally since the page arrived

    def find(self, element_id: str) -> dict[str, Any] | None:
        """The element with this id, or None."""
        return forms.find(self.elements, element_id)

    def element(self, element_id: str) -> dict[str, Any]:
        """The element with this id (``KeyError`` when the page has none)."""
        found = self.find(element_id)
        if found is None:
            raise KeyError(f"{self.name} has no element {element_id!r}")
        return found

    def walk(self) -> Iterator[dict[str, Any]]:
        """Every element of the page, depth first."""
        return walk(self.elements)

    def value(self, name_or_id: str) -> Any:
        """The value of the input with this form name (or the element with this id)."""
        found = forms.find_input(self.elements, name_or_id)
        if found is None:
            raise KeyError(f"{self.name} has no input {name_or_id!r}")
        return found.get("value")

    def set_value(self, name_or_id: str, value: str | int | bool | FileUpload | None) -> None:
        """Set an input's value as a user would type or choose it; a ``FileUpload`` goes on an Upload element.

        The value is sent with the next action whose form holds the input; a patch from the service that sets the
        element's value (e.g. the input cleared after a send) replaces it.
        """
        target = forms.find_input(self.elements, name_or_id)
        if target is None:
            raise KeyError(f"{self.name} has no input {name_or_id!r}")
        name = target.get("name") or target["id"]
        self._edited.add(target["id"])
        if isinstance(value, FileUpload):
            self._files[name] = value
            target["value"] = value.filename
            return
        if target.get("type") == "Upload":
            self._files.pop(name, None)
        if value is None:
            target.pop("value", None)
        else:
            target["value"] = value

    def form_values(self, form: str | None = None) -> dict[str, str]:
        """The fields an action with this ``form`` would send (files left out)."""
        return forms.collect(self.elements, form, self._files)[0]

    def _missing_required(self, target: dict[str, Any]) -> bool:
        """True when the element names inputs of which one must be filled (``props.requires_one_of``, e.g. Send
        with an empty message and no file) and none is."""
        props = target.get("props")
        names = props.get("requires_one_of") if isinstance(props, dict) else None
        if not isinstance(names, list) or not names:
            return False
        for name in names:
            if name in self._files:
                return False
            found = forms.find_input(self.elements, str(name))
            if found is not None and str(found.get("value") or "").strip():
                return False
        return True
