"""The ``reference`` step-parsing profile (the default), case by case from the reference
implementation's rules, and single-pass prompt templating."""

from __future__ import annotations

import pytest

from benchmarks.generation import build_prompt, parse_steps
from core.templating import fill_template


def steps(text):
    return parse_steps(text, profile="reference").steps


def test_reference_is_the_default_and_unknown_profiles_are_refused():
    assert parse_steps("2 cups of milk").steps == ["cups of milk"]
    assert parse_steps("2 cups of milk", profile="lenient").steps == ["2 cups of milk"]
    with pytest.raises(ValueError, match="strict"):
        parse_steps("x", profile="strict")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the leading number and at most one of ) . : - go
        ("1. Boil water.\n2. Pour.", ["Boil water.", "Pour."]),
        ("1) Boil\n2) Pour", ["Boil", "Pour"]),
        ("1: Boil\n2: Pour", ["Boil", "Pour"]),
        ("1 - Boil\n2 - Pour", ["Boil", "Pour"]),
        ("1-Boil", ["Boil"]),
        ("1 Boil", ["Boil"]),
        ("1.. Boil", [". Boil"]),  # at most one marker
        ("1.) Boil", [") Boil"]),
        ("1 . Boil", ["Boil"]),  # spaces around the marker go
        ("12. Twelfth", ["Twelfth"]),
        # the quirk the published numbers used
        ("2 cups of milk", ["cups of milk"]),
        ("1.5 cups of flour", ["5 cups of flour"]),
        ("10:30 start", ["30 start"]),
        ("3rd step", ["rd step"]),
        # lines not starting with a digit are dropped once one does
        ("Sure! Steps:\n1. Boil.\nEnjoy!\n2. Pour.", ["Boil.", "Pour."]),
        ("Step 1: Boil\n2. Pour", ["Pour"]),
        ("- Boil\n1. Pour", ["Pour"]),
        ("**1.** Boil\n2. Pour", ["Pour"]),
        # leading whitespace of a line is stripped first
        ("   1. Boil\n\t2. Pour", ["Boil", "Pour"]),
        # a numbered line with nothing after the number is dropped
        ("1.\nBoil water.\n2. Pour.", ["Pour."]),
        # unicode digits are digits to \d
        ("\u0661. Arabic-indic one", ["Arabic-indic one"]),
    ],
)
def test_numbered_lines(text, expected):
    assert steps(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Boil water.\nPour it.", ["Boil water.", "Pour it."]),
        ("  Boil water.  \n\n\n  Pour it.\n", ["Boil water.", "Pour it."]),
        ("- Boil\n* Pour", ["- Boil", "* Pour"]),  # bullets kept as written
        ("Step one: boil", ["Step one: boil"]),
        # lines that start with a digit but leave nothing: no step, so every line as written
        ("1.\n2.", ["1.", "2."]),
        ("1.\nBoil", ["1.", "Boil"]),
    ],
)
def test_no_numbered_step_means_every_non_empty_line(text, expected):
    assert steps(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t\n", None, 42])
def test_empty_or_not_text_gives_no_steps(text):
    assert parse_steps(text, profile="reference").steps == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>1. no</think>\n1. yes", ["yes"]),
        ("<think>a</think><think>1. b</think>1. c", ["c"]),  # after the LAST </think>
        ("1. before</think>1. after", ["after"]),  # a lone closing tag
        ("<think>\n1. unclosed\n2. stays", ["unclosed", "stays"]),  # unclosed <think> stays
        ("<THINK>1. x</THINK>2. y", ["<THINK>1. x</THINK>2. y"]),  # case-sensitive tags
        ("<think>only thinking</think>", []),
        ("noise <answer>\n1. x\n2. y\n</answer> tail", ["x", "y"]),
        ("<answer>1. a</answer><answer>1. b</answer>", ["a"]),  # the first answer
        ("<answer>\n1. open only", ["open only"]),  # no </answer>: kept whole
        ("<think>1. t</think>\n<answer>1. a</answer>", ["a"]),
        ("<answer></answer>", []),
    ],
)
def test_reasoning_and_answer_tags(text, expected):
    assert steps(text) == expected


def test_answer_tag_without_its_pair_is_not_cut():
    # only "<answer>" present: the text is kept whole, and the tag line is not a numbered step
    assert steps("<answer>\n1. open only") == ["open only"]
    assert steps("<answer>\nBoil") == ["<answer>", "Boil"]


def test_other_line_breaks_split_lines_as_python_does():
    assert steps("1. a\r\n2. b\r3. c\u20284. d") == ["a", "b", "c", "d"]


# --- single-pass templating ---------------------------------------------------------------


@pytest.mark.parametrize(
    "goal",
    ["Make {n} cookies", "Use {steps} and {reference_steps}", "{goal}", "{resources} {{x}}"],
)
def test_placeholders_in_the_goal_stay_as_written(goal):
    prompt = build_prompt(variant="instruct", goal=goal, resources=["{n}"], n_steps=3)
    assert f"Goal:\n{goal}\n\nResources:\n" in prompt
    assert '["{n}"]' in prompt
    assert "3 steps to achieve the goal" in prompt


def test_fill_template_matches_str_format_on_templates_and_fills_once():
    template = "a {x} {{literal}} {y}}} b"
    assert fill_template(template, {"x": "{y}", "y": "Y"}) == template.format(x="{y}", y="Y")
    assert fill_template("{x}{x}", {"x": "{x}"}) == "{x}{x}"
    with pytest.raises(KeyError, match="missing"):
        fill_template("{missing}", {})
    assert fill_template("{ not a field }", {}) == "{ not a field }"


def test_parsers_and_templating_are_pure():
    import benchmarks.generation
    import core.templating
    import judging.parsing
    from tests.support.purity import django_imports

    for module in (benchmarks.generation, core.templating, judging.parsing):
        assert django_imports(module) == {}, module.__name__
