from __future__ import annotations

import pytest

from mining import replies
from mining.replies import ReplyError


def test_extraction_from_fenced_json_with_numbered_steps():
    text = 'Here you go:\n```json\n{"has_valid_process": true, "goal": " Bake bread ", "steps": ["1. Mix", "2) Knead", "Bake 2. times"]}\n```'
    ex = replies.parse_extraction(text)
    assert ex.has_valid_process and ex.goal == "Bake bread"
    assert ex.steps == ["Mix", "Knead", "Bake 2. times"]


def test_extraction_from_object_inside_prose():
    ex = replies.parse_extraction(
        'Result: {"has_valid_process": false, "goal": "", "steps": []} done'
    )
    assert ex == replies.Extraction(False, "", [])


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "empty reply"),
        ("no json here", "no JSON object"),
        ('{"goal": "x", "steps": ["a"]}', "missing field 'has_valid_process'"),
        ('{"has_valid_process": "maybe", "goal": "x", "steps": []}', "must be a boolean"),
        ('{"has_valid_process": true, "goal": "x", "steps": [1, 2]}', "item 0 must be a string"),
        ('{"has_valid_process": true, "goal": "", "steps": ["a"]}', "'goal' is empty"),
        ('{"has_valid_process": true, "goal": "g", "steps": []}', "'steps' is empty"),
    ],
)
def test_extraction_errors_name_the_problem(text, message):
    with pytest.raises(ReplyError, match=message):
        replies.parse_extraction(text)


def test_filter_accepts_string_booleans():
    assert replies.parse_filter(
        '{"judgment": "true", "reason": "Pure Math"}'
    ) == replies.FilterVerdict(True, "Pure Math")
    assert replies.parse_filter('{"judgment": false}') == replies.FilterVerdict(False, "")


def test_rewrite_requires_goal_and_steps():
    rw = replies.parse_rewrite(
        '{"rewritten_goal": "G", "rewritten_steps": "Step 1: a\\nStep 2: b"}'
    )
    assert rw == replies.Rewrite("G", ["a", "b"])
    with pytest.raises(ReplyError, match="rewritten_steps"):
        replies.parse_rewrite('{"rewritten_goal": "G"}')


def test_resources_deduplicated_case_insensitively():
    assert replies.parse_resources('{"resources": ["Oven", "oven", " tray "]}') == ["Oven", "tray"]
    with pytest.raises(ReplyError):
        replies.parse_resources('{"resources": "oven"  ')


def test_final_verdict_all_four_must_be_yes():
    ok = {"answer": "yes", "reason": ""}
    import json

    good = dict.fromkeys(replies.FINAL_CRITERIA, ok)
    assert replies.parse_final(json.dumps(good)).passed
    bad = dict(good, sequential={"answer": "No", "reason": "branches"})
    v = replies.parse_final(json.dumps(bad))
    assert (
        not v.passed
        and v.failed == ["sequential"]
        and v.answers["sequential"]["reason"] == "branches"
    )
    with pytest.raises(ReplyError, match="'goal_steps_alignment'"):
        replies.parse_final(json.dumps(dict.fromkeys(replies.FINAL_CRITERIA[:3], ok)))
    with pytest.raises(ReplyError, match='must be "yes" or "no"'):
        replies.parse_final(json.dumps(dict(good, correctness={"answer": "perhaps"})))


def test_schemas_cover_every_llm_stage():
    assert set(replies.SCHEMAS) == {
        "procedures",
        "filter",
        "postprocess",
        "resources",
        "final_filter",
    }
