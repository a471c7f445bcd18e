"""The disagreement selector against the hand-computed scenario (see scenario.py): kinds, the
counts against the validation page's confusion table, item rows, Jaccard, filters, sorting,
pagination and refused options."""

import pytest
from django.http import QueryDict

from tests.validation.disagreements.scenario import EXPECTED_KINDS
from validation.disagreements import reads as sel
from validation.judge_validation import reads as validation_sel

pytestmark = pytest.mark.django_db


def _data(scenario):
    return sel.study_disagreements(study=scenario["study"], judge=scenario["judge"])


def _ids(rows, scenario):
    index = {item.pk: k for k, item in enumerate(scenario["items"])}
    return [index[r["item_id"]] for r in rows]


def test_every_judged_labelled_item_has_its_kind(scenario, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        data = _data(scenario)
    assert [r["kind"] for r in data.rows] == EXPECTED_KINDS  # item 8 (not judged) left out
    assert data.counts == {
        "judge_failure": 1,
        "people_failure": 1,
        "people_split": 1,
        "parse_failed": 1,
        "both_failure": 3,
        "both_none": 1,
    }
    assert data.topics == ["Clinic", "Kitchen"]
    assert data.generators == sorted(["gen-x", scenario["items"][1].generation.generator.name])


def test_counts_equal_the_validation_pages_confusion_table(scenario):
    data = _data(scenario)
    report = validation_sel.judge_validation(
        study=scenario["study"], judge=scenario["judge"], n_resamples=0
    )
    c = data.counts
    assert report["confusion"]["counts"] == [
        [c["both_failure"], c["people_failure"]],
        [c["judge_failure"], c["both_none"]],
    ]
    assert report["items"]["n_parse_failed"] == c["parse_failed"]
    assert report["items"]["n_tied"] == c["people_split"]


def test_item_row_holds_both_sides(scenario):
    row = _data(scenario).rows[0]
    item = scenario["items"][0]
    assert row["item_id"] == item.pk and row["generation_id"] == item.generation_id
    assert row["goal"] == item.generation.procedure.goal
    assert row["reference_steps"] == item.generation.procedure.steps
    assert row["generated_steps"] == item.generation.predicted_steps
    assert row["topic"] == "Kitchen" and row["generator"] == "gen-x"
    assert row["human_majority"] == "has_failure" and row["judge_verdict"] == "has_failure"
    assert (row["n_annotators"], row["n_people_failure"]) == (3, 2)
    assert row["judge_reasoning"] == f"Judge reasoning on {item.generation_id}."
    assert [f["L2_steps"] for f in row["judge_failures"]] == [[2], [3]]
    assert [a["annotator"] for a in row["annotations"]] == ["P0", "P1", "P2"]  # as the report
    assert row["annotations"][0]["failures"][0]["l2_steps"] == [2]
    assert row["annotations"][0]["comments"] == "P0 comment on item 0."
    assert row["annotations"][2] == {
        "annotator": "P2",
        "has_failure": False,
        "failures": [],
        "comments": "",
    }
    assert row["links"] == {"judge": {"l1": [1], "l2": [2, 3]}, "people": {"l1": [1], "l2": [2, 4]}}
    assert row["step_overlap"]["value"] == pytest.approx(1 / 3)


def test_jaccard_values_and_summary(scenario):
    data = _data(scenario)
    overlaps = {k: r["step_overlap"] for k, r in zip(range(8), data.rows, strict=True)}
    assert overlaps[7] == {"value": 1.0}
    assert overlaps[6]["value"] is None and "L2 step" in overlaps[6]["undefined"]
    assert all(overlaps[k] is None for k in (1, 2, 3, 4, 5))  # only both-say-failure items
    summary = sel.overlap_report(data, n_resamples=400, seed=1)
    assert (summary["n_items"], summary["n_defined"], summary["n_no_l2_links"]) == (3, 2, 1)
    assert summary["mean"]["value"] == pytest.approx(2 / 3)
    ci = summary["mean"]["ci"]
    assert 1 / 3 <= ci["low"] <= 2 / 3 <= ci["high"] <= 1.0 and ci["n_resamples"] == 400


def test_parse_failed_row_has_no_failures(scenario):
    row = _data(scenario).rows[5]
    assert row["judge_verdict"] == "parse_failed" and row["judge_failures"] == []
    assert row["judge_reasoning"] == ""


def test_default_filter_is_the_four_disagreements(scenario):
    rows = sel.select_rows(_data(scenario), sel.Filters())
    assert _ids(rows, scenario) == [1, 2, 4, 5]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("kind=judge_failure", [2]),
        ("kind=people_failure&kind=people_split", [1, 4]),
        ("kind=people_failure,parse_failed", [1, 5]),
        ("kind=all", [0, 1, 2, 3, 4, 5, 6, 7]),
        ("kind=all&topic=Kitchen", [0, 1, 2, 3]),
        ("kind=all&generator=gen-x", [0, 2, 4]),
        ("topic=Clinic&generator=gen-x", [4]),
        ("kind=both_failure&sort=overlap", [0, 7, 6]),
        ("kind=both_failure&sort=-overlap", [7, 0, 6]),
        ("kind=all&sort=-item", [7, 6, 5, 4, 3, 2, 1, 0]),
        ("kind=all&sort=kind", [2, 1, 4, 5, 0, 6, 7, 3]),
        ("kind=all&sort=-people", [1, 7, 0, 6, 4, 2, 3, 5]),
        ("kind=all&sort=judge_failures", [1, 3, 5, 2, 4, 6, 7, 0]),
        ("kind=all&sort=generator", [1, 3, 5, 6, 7, 0, 2, 4]),
        ("kind=all&sort=-topic", [0, 1, 2, 3, 4, 5, 6, 7]),
    ],
)
def test_filters_and_sorting(scenario, query, expected):
    filters = sel.filters_from_query(QueryDict(query))
    assert _ids(sel.select_rows(_data(scenario), filters), scenario) == expected


def test_pagination(scenario):
    data = _data(scenario)
    filters = sel.filters_from_query(QueryDict("kind=all&page_size=3&page=3"))
    page = sel.paginate(sel.select_rows(data, filters), filters)
    assert (page.count, page.n_pages, page.number) == (8, 3, 3)
    assert _ids(page.rows, scenario) == [6, 7]
    first = sel.filters_from_query(QueryDict("kind=all&page_size=3"))
    assert _ids(sel.paginate(sel.select_rows(data, first), first).rows, scenario) == [0, 1, 2]
    past = sel.filters_from_query(QueryDict("kind=all&page_size=3&page=4"))
    with pytest.raises(sel.ParamError, match="there are 3 pages"):
        sel.paginate(sel.select_rows(data, past), past)
    empty = sel.filters_from_query(QueryDict("kind=judge_failure&topic=Clinic"))
    page = sel.paginate(sel.select_rows(data, empty), empty)
    assert (page.count, page.n_pages, page.rows) == (0, 1, [])


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("kind=nope", "kind"),
        ("sort=size", "sort"),
        ("sort=--item", "sort"),
        ("page=0", "page"),
        ("page=x", "page"),
        ("page_size=201", "page_size"),
        ("topic=" + "t" * 201, "topic"),
        ("generator=a%00b", "generator"),
    ],
)
def test_bad_options_are_refused_by_name(query, field):
    with pytest.raises(sel.ParamError) as exc:
        sel.filters_from_query(QueryDict(query))
    assert field in exc.value.errors


def test_unknown_topic_or_generator_is_refused(scenario):
    data = _data(scenario)
    with pytest.raises(sel.ParamError) as exc:
        sel.select_rows(data, sel.Filters(topic="Gardening", generator="nobody"))
    assert set(exc.value.errors) == {"topic", "generator"}


def test_export_row_fields(scenario):
    data = _data(scenario)
    row = sel.export_row(data.rows[0], study=scenario["study"], judge=scenario["judge"])
    assert tuple(row) == sel.EXPORT_FIELDS
    assert row["judge_l2_steps"] == [2, 3] and row["people_l2_steps"] == [2, 4]
    assert row["step_overlap"] == pytest.approx(1 / 3) and row["judge"] == "judge-d"


def test_past_the_only_page_the_refusal_speaks_in_the_singular():
    past = sel.filters_from_query(QueryDict("kind=all&page_size=20&page=2"))
    with pytest.raises(sel.ParamError) as refused:
        sel.paginate([], past)
    assert "there is 1 page of 20 items" in str(refused.value)
    one = sel.filters_from_query(QueryDict("kind=all&page_size=1&page=3"))
    with pytest.raises(sel.ParamError) as refused:
        sel.paginate([{}, {}], one)
    assert "there are 2 pages of 1 item" in str(refused.value)
