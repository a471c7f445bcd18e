"""The H.3 judge prompt is Figure 22 of seed 000, byte for byte.

``tests/judging/data/figure22_judge_prompt.txt`` is Figure 22 as plain text: the prompt the
paper's How2Score numbers were judged with (sha256 ``a4496adb…``, the reference
implementation's ``prompts/judge.txt``). ``figure22_seed000.md`` is the figure as the seed's
text gives it (a PDF-to-Markdown rendering: escaped ``\\*``, doubled ``## ##`` headings, ``---``
for dashes, a code fence around the input). The first test compares the template the app
sends with the plain-text copy byte for byte; the second checks the copy against the seed's
rendering word for word once the rendering's Markdown is undone by the fixed rules below, with
the few words the figure's typesetting changed listed one by one.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from judging import prompting

DATA = Path(__file__).resolve().parent / "data"
FIGURE_22 = DATA / "figure22_judge_prompt.txt"
SEED_RENDERING = DATA / "figure22_seed000.md"
FIGURE_22_SHA256 = "a4496adb9c397eeb109d008c744071ac34a37deb0f3dc32e5d6abb03d0cedaf3"

# (seed rendering's words, the prompt's words): where the typeset figure differs
TYPESETTING = [
    (["100C"], ["100", "°C"]),
    (["oil--vinegar"], ["oil–vinegar"]),
    (["recommendations—a"], ["recommendations", "—", "a"]),
    (["failures—it"], ["failures", "—", "it"]),
    (["thought", "process."], ["."]),  # the figure repeats "thought process" at the end
]


def test_template_is_figure_22_byte_for_byte():
    ours = (prompting.PROMPTS_DIR / f"{prompting.DEFAULT_TEMPLATE}.txt").read_bytes()
    figure = FIGURE_22.read_bytes()
    assert ours == figure
    assert hashlib.sha256(figure).hexdigest() == FIGURE_22_SHA256
    assert prompting.load_template("judge_h3").encode("utf-8") == figure


def test_rendered_prompt_is_the_figure_filled_in_plus_the_json_reminder():
    figure = FIGURE_22.read_text(encoding="utf-8")
    prompt = prompting.render_judge_prompt(
        template=prompting.load_template("judge_h3"),
        goal="Make tea {n}",
        reference_steps=["Boil water.", "Steep {steps}."],
        steps=["Boil water."],
    )
    expected = (
        figure.format(
            goal="Make tea {n}",
            reference_steps="1. Boil water.\n2. Steep {steps}.",
            steps="1. Boil water.",
        )
        + "\n\nReturn only valid json."
    )
    assert prompt == expected


def _words(markdown: str) -> list[str]:
    text = markdown.replace("\\*", "*").replace("\\_", "_").replace("---", "—")
    text = re.sub(r"[#*`]", " ", text)
    return text.split()


def _apply_typesetting(words: list[str]) -> list[str]:
    out, i = [], 0
    while i < len(words):
        for seed_words, prompt_words in TYPESETTING:
            if words[i : i + len(seed_words)] == seed_words:
                out.extend(prompt_words)
                i += len(seed_words)
                break
        else:
            out.append(words[i])
            i += 1
    return out


def test_the_copy_is_the_seeds_figure_22_word_for_word():
    seed_words = _apply_typesetting(_words(SEED_RENDERING.read_text(encoding="utf-8")))
    prompt_words = _words(FIGURE_22.read_text(encoding="utf-8"))
    assert seed_words == prompt_words
    assert len(prompt_words) > 2000


def test_the_word_check_sees_a_changed_word():
    words = _words(FIGURE_22.read_text(encoding="utf-8"))
    changed = FIGURE_22.read_text(encoding="utf-8").replace("critical failure", "major failure", 1)
    assert _words(changed) != words
