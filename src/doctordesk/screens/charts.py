"""Charts drawn by pygal as accessible SVG (a ``<title>`` and a ``<desc>``), handed to clients as a data: URL
the way the QR code ``Image`` is: a client shows it as an ``<img>`` and never parses it as HTML. The same figure's
table travels beside it (the ``Chart`` element, docs/protocol.md), so a screen reader reads the numbers.

The SVG is the same bytes for the same figure and language (no random ids, no date comments), so an unchanged
figure leaves the page's content hash unchanged and a poll answers "nothing changed"."""

from __future__ import annotations

import base64
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from typing import Any, Literal

import pygal
from pygal.style import Style

# pygal adds an import hook for its map plugins (which we do not use) of the kind Python deprecated: every import
# that reaches it warns (ImportWarning). Taken out again, imports work as before pygal came.
sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, pygal.PluginImportFixer)]

ChartKind = Literal["bar", "line", "hbar"]

# Dark enough on white for every series (WCAG's 3:1 for graphics), the first one the app's accent.
_STYLE = Style(
    background="#ffffff",
    plot_background="#ffffff",
    foreground="#1f2937",
    foreground_strong="#111827",
    foreground_subtle="#4b5563",
    colors=("#1d4ed8", "#b45309", "#047857", "#7c3aed"),
    font_family="system-ui, sans-serif",
    label_font_size=11,
    major_label_font_size=11,
    legend_font_size=13,
    title_font_size=15,
)
_KINDS: dict[str, Callable[..., Any]] = {"bar": pygal.Bar, "line": pygal.Line, "hbar": pygal.HorizontalBar}


def svg(
    kind: ChartKind,
    *,
    title: str,
    description: str,
    labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    number: Callable[[float], str],
    no_data: str,
) -> str:
    """The chart as SVG text: ``labels`` along the axis, each series ``(name, values)`` (None: no value)."""
    chart = _KINDS[kind](
        style=_STYLE,
        js=[],
        no_prefix=True,
        disable_xml_declaration=True,
        width=800,
        height=360,
        show_legend=len(series) > 1,
        legend_at_bottom=True,
        x_label_rotation=0 if kind == "hbar" else 45,
        # A label a week along a long axis (the others stay in the table): 90 labels would overlap.
        show_minor_x_labels=kind == "hbar" or len(labels) <= 16,
        x_labels_major=None if len(labels) <= 16 else list(labels[::7]),
        truncate_label=-1,
        value_formatter=number,
        no_data_text=no_data,
        print_values=False,
        include_x_axis=True,
        min_scale=1,
        max_scale=6,
        allow_interruptions=True,
    )
    chart.title = title
    chart.x_labels = list(labels)
    for name, values in series:
        chart.add(name, list(values))
    root = chart.render_tree()
    _describe(root, title, description)
    return ET.tostring(root, encoding="unicode")


def _describe(root: ET.Element, title: str, description: str) -> None:
    """Drop pygal's comments (they carry the day of rendering) and script, give the SVG ``role="img"``, its
    ``<title>`` and a ``<desc>``, and name them in ``aria-labelledby``."""
    for parent in root.iter():
        # pygal's comments, and its script of tooltip settings (an <img> runs none; nothing to carry).
        for child in [c for c in parent if not isinstance(c.tag, str) or c.tag == "script"]:
            parent.remove(child)
    # pygal writes unqualified tags under an ``xmlns`` attribute: the new ones follow suit.
    title_node = root.find("title")
    if title_node is None:
        title_node = ET.SubElement(root, "title")
    title_node.text = title
    title_node.set("id", "chart-title")
    desc = ET.Element("desc", {"id": "chart-desc"})
    desc.text = description
    root.insert(list(root).index(title_node) + 1, desc)
    root.set("role", "img")
    root.set("aria-labelledby", "chart-title chart-desc")
    root.attrib.pop("id", None)


def data_url(svg_text: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg_text.encode()).decode("ascii")
