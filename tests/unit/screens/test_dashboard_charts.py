"""The dashboard's chart pictures (screens/charts.py): accessible SVG, the same bytes for the same figure (so an
unchanged figure leaves the page unchanged), no script, shown from a data: URL."""

from __future__ import annotations

import base64

from doctordesk.screens.charts import data_url, svg


def draw(values: list[float | None]) -> str:
    return svg(
        "bar", title="Requests per day", description="How many <requests> & when", labels=["1 Nov", "2 Nov"],
        series=[("Requests", values)], number=lambda v: f"{v:g}", no_data="No data",
    )  # fmt: skip


def test_the_svg_has_a_title_and_a_description_named_by_aria():
    text = draw([1, 2])
    assert text.startswith("<svg") and 'role="img"' in text and 'aria-labelledby="chart-title chart-desc"' in text
    assert '<title id="chart-title">Requests per day</title>' in text
    assert '<desc id="chart-desc">How many &lt;requests&gt; &amp; when</desc>' in text  # escaped, never markup


def test_the_same_figure_draws_the_same_bytes_and_another_figure_other_ones():
    assert draw([1, 2]) == draw([1, 2]) and draw([1, 2]) != draw([1, 3])


def test_no_script_no_comment_and_no_outside_address():
    text = draw([1, None])
    assert "<script" not in text and "<!--" not in text and "http://pygal" not in text and "//kozea" not in text


def test_the_picture_travels_as_an_svg_data_url():
    url = data_url(draw([1, 2]))
    assert url.startswith("data:image/svg+xml;base64,")
    assert base64.b64decode(url.split(",", 1)[1]).decode() == draw([1, 2])
