"""Pure tests: H.2 prompts, the prompt builder and the step parser (no database)."""

from __future__ import annotations

import hashlib

import pytest

from benchmarks.generation import (
    apply_stop,
    build_prompt,
    decoding_defaults,
    final_answer,
    numbered_lines,
    parse_steps,
    prompt_template,
)


def lenient(text):
    return parse_steps(text, profile="lenient")


def test_prompt_files_are_the_h2_figures():
    base = prompt_template("base")
    inst = prompt_template("instruct")
    # Figure 20 begins with the first example; Figure 21 with the instruction.
    assert base.startswith(
        "Goal:\nPrevent a door from slamming shut by cushioning the latch with a rubber band.\n"
    )
    assert base.endswith(
        "Goal:\n{goal}\n\nResources:\n{resources}\n\nExactly {n} steps to achieve the goal using the given resources:\n"
    )
    assert inst.startswith(
        "You will be given a goal and a list of resources. Your task is to output a list of steps"
    )
    assert "Only return the steps, do not say anything else.\n" in inst
    assert inst.endswith("\n\n{n} steps to achieve the goal using the given resources:\n")
    # the three shots, in both
    for shot in (
        "Exactly 3 steps",
        "Exactly 8 steps",
        "Exactly 11 steps",
        "11. Back up or sync the stylus settings",
    ):
        assert shot in base and shot in inst
    # same byte sizes as the reference implementation's inference_base.txt / inference_inst.txt
    assert (len(base), len(inst)) == (2502, 2984)
    assert hashlib.sha256(base.encode()).hexdigest().startswith("6044c289")


def test_build_prompt_fills_goal_resources_and_n():
    p = build_prompt(
        variant="instruct", goal="Make {tea}", resources=["kettle", "tea bag"], n_steps=4
    )
    assert p.endswith(
        'Goal:\nMake {tea}\n\nResources:\n["kettle", "tea bag"]\n\n4 steps to achieve the goal using the given resources:\n'
    )
    assert "return exactly 4 steps." in p
    b = build_prompt(variant="base", goal="Boil water", resources=[], n_steps=2)
    assert b.endswith(
        "Goal:\nBoil water\n\nResources:\n[]\n\nExactly 2 steps to achieve the goal using the given resources:\n"
    )
    assert "{" not in b.replace("{tea}", "")


def test_build_prompt_rejects_bad_variant_and_n():
    with pytest.raises(ValueError, match="unknown prompt variant 'chat'"):
        build_prompt(variant="chat", goal="g", resources=[], n_steps=1)
    with pytest.raises(ValueError, match="n_steps must be at least 1"):
        build_prompt(variant="base", goal="g", resources=[], n_steps=0)


def test_decoding_defaults_greedy_and_base_stop():
    assert decoding_defaults("base")["stop"] == ["\n\n"]
    assert decoding_defaults("instruct")["stop"] == []
    assert decoding_defaults("base")["temperature"] == 0.0


def test_apply_stop_cuts_like_a_server():
    text = "1. Boil water.\n2. Pour.\n\nGoal:\nSomething else\n\nResources:\n[]\n1. extra"
    assert apply_stop(text, ["\n\n"]) == "1. Boil water.\n2. Pour."
    assert apply_stop("\n\n1. a\n2. b", ["\n\n"]) == "1. a\n2. b"
    assert apply_stop("1. a", []) == "1. a"


def test_parse_numbered_list_drops_stray_text():
    text = "Sure! Here are the steps:\n\n1. Boil water.\n2) Add tea.\n3: Steep 3 minutes.\n\nEnjoy your tea!"
    parsed = lenient(text)
    assert parsed.steps == ["Boil water.", "Add tea.", "Steep 3 minutes."]
    assert parsed.style == "numbered"
    assert parsed.numbers == [1, 2, 3]
    assert parsed.stray_lines == 2


def test_parse_step_prefix_and_markdown():
    text = "Step 1: Fill the kettle.\n**Step 2.** Boil it.\n**3.** Pour into a mug.\n(4) Add the bag.\n5 - Wait."
    parsed = lenient(text)
    assert parsed.steps == [
        "Fill the kettle.",
        "Boil it.",
        "Pour into a mug.",
        "Add the bag.",
        "Wait.",
    ]
    assert parsed.numbers == [1, 2, 3, 4, 5]


def test_parse_bullets_and_plain_lines():
    assert lenient("Steps:\n- Boil water.\n* Add tea.\n• Steep.").steps == [
        "Boil water.",
        "Add tea.",
        "Steep.",
    ]
    assert lenient("Steps:\n- Boil water.\n* Add tea.").stray_lines == 1
    plain = lenient("Boil water.\nAdd tea.\n")
    assert plain.steps == ["Boil water.", "Add tea."] and plain.style == "lines"
    assert lenient("   \n\n").steps == [] and lenient("").style == "empty"


def test_parse_keeps_fewer_or_more_steps_than_asked():
    few = lenient("1. One.\n2. Two.")
    many = lenient("1. One.\n2. Two.\n3. Three.\n4. Four.")
    assert few.count_mismatch(3) == -1 and many.count_mismatch(3) == 1


def test_parse_numbers_inside_text_are_not_markers():
    parsed = lenient(
        "1. Add 2 cups of flour.\n2 cups of sugar are optional.\n2. Bake at 10:30 for 1.5 hours."
    )
    assert parsed.steps == ["Add 2 cups of flour.", "Bake at 10:30 for 1.5 hours."]
    assert lenient("1.5 cups of flour\n10:30 start").style == "lines"


def test_parse_strips_reasoning_fences_and_answer_tags():
    text = "<think>1. not a step\n2. nor this</think>\n```\n1. Real one.\n2. Real two.\n```"
    assert lenient(text).steps == ["Real one.", "Real two."]
    assert final_answer("blah <answer>1. x</answer> tail") == "1. x"
    assert lenient("<answer>\n1. x\n2. y\n</answer>").steps == ["x", "y"]


def test_parse_number_alone_on_its_line_takes_the_next_line():
    assert lenient("1.\nBoil water.\n2.\nPour it.").steps == ["Boil water.", "Pour it."]


def test_numbered_lines_reports_numbers_in_order():
    assert numbered_lines("Intro\n1. a\n3. b\nStep 4: c") == [1, 3, 4]
