"""Server-rendered SVG plots: well-formed XML, accessible names, every value as text."""

import io
import xml.etree.ElementTree as ET

import pytest

from annotation.agreement_report import build_report
from annotation.label_file import parse_label_csv
from annotation.plots import report_plots
from core.charts import bar_chart_svg, confusion_matrix_svg
from tests.annotation.agreement.test_report import CSV

NS = {"s": "http://www.w3.org/2000/svg"}


def parse(svg):
    return ET.fromstring(svg)


def accessible_name(root):
    ids = root.get("aria-labelledby").split()
    texts = {el.get("id"): el.text for el in root.iter() if el.get("id")}
    assert root.get("role") == "img"
    return [texts[i] for i in ids]


def test_bar_chart_escapes_and_labels_every_bar():
    svg = bar_chart_svg(
        title="Alpha <by> topic & more",
        labels=["cook & <bake>", "diy", "empty"],
        values=[0.5, -0.25, None],
        intervals=[(0.3, 0.7), None, None],
        value_range=(-1, 1),
    )
    root = parse(svg)
    title, desc = accessible_name(root)
    assert title == "Alpha <by> topic & more"
    assert "cook & <bake>: 0.500 (0.300 to 0.700)" in desc and "empty: no value" in desc
    bars = root.findall("s:g[@class='bar']", NS)
    assert [b.find("s:title", NS).text for b in bars] == [
        "cook & <bake>: 0.500",
        "diy: -0.250",
        "empty: no value",
    ]
    assert [len(b.findall("s:rect", NS)) for b in bars] == [1, 1, 0]  # no value: no bar
    assert len(bars[0].findall("s:path", NS)) == 1  # CI whisker
    # The negative bar ends at the zero line; the positive one starts there.
    zero = float(root.findall("s:line", NS)[0].get("x1"))
    neg, pos = bars[1].find("s:rect", NS), bars[0].find("s:rect", NS)
    assert float(neg.get("x")) + float(neg.get("width")) == pytest.approx(zero, abs=0.2)
    assert float(pos.get("x")) == pytest.approx(zero, abs=0.2)
    assert "<script" not in svg


def test_bar_chart_length_mismatch():
    with pytest.raises(ValueError, match="same length"):
        bar_chart_svg(title="t", labels=["a"], values=[1, 2])


def test_confusion_matrix_cells():
    svg = confusion_matrix_svg(
        title="A vs B",
        row_labels=["yes", "no"],
        col_labels=["yes", "no"],
        counts=[[20, 5], [10, 15]],
        row_title="A",
        col_title="B",
    )
    root = parse(svg)
    title, desc = accessible_name(root)
    assert title == "A vs B" and desc.startswith("50 items; 35 on the diagonal")
    cells = root.findall("s:g[@class='cell']", NS)
    assert [c.find("s:text", NS).text for c in cells] == ["20", "5", "10", "15"]
    assert cells[1].find("s:title", NS).text == "A yes, B no: 5"
    fills = [c.find("s:rect", NS).get("fill") for c in cells]
    assert fills[0] != fills[1]  # the largest count is darkest
    assert cells[0].find("s:text", NS).get("fill") == "#ffffff"
    with pytest.raises(ValueError, match="one row per row label"):
        confusion_matrix_svg(title="x", row_labels=["a"], col_labels=["a"], counts=[[1], [2]])


def test_report_plots_cover_the_report():
    f = parse_label_csv(io.StringIO(CSV), group_columns=["topic"])
    report = build_report(f.rows, with_location=True, group_columns=["topic"], n_resamples=100)
    plots = report_plots(report)
    assert set(plots) == {
        "label_distribution",
        "leave_one_out",
        "alpha",
        "alpha_by_topic",
        "confusion_a_b",
        "confusion_a_c",
        "confusion_b_c",
    }
    ids = []
    for svg in plots.values():
        root = parse(svg)
        accessible_name(root)
        ids += [el.get("id") for el in root.iter() if el.get("id")]
    assert len(ids) == len(set(ids))  # the plots can share one page
    alpha = parse(plots["alpha"])
    labels = [b.find("s:title", NS).text for b in alpha.findall("s:g[@class='bar']", NS)]
    assert labels[0] == f"label: {report['alpha']['value']:.3f}"
    assert labels[1].startswith("first-failure location: ")
