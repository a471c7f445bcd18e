"""Greek letters keep their case in the upper-cased table headers and stat labels: every α, κ,
ρ, ω, ε, λ written in a template's <th> or <dt> sits in a ``greek`` span, which the stylesheet
exempts from ``text-transform`` (an upper-cased ρ reads as P)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GREEK = "αβγδεζηθικλμνξπρστυφχψω"
CELL = re.compile(r"<(th|dt)\b[^>]*>(.*?)</\1>", re.S)


def _bare_greek(body: str) -> list[str]:
    text = re.sub(r'<span class="greek">[^<]</span>', "", body)
    text = re.sub(r"{{.*?}}|{%.*?%}", "", text)
    return re.findall(f"[{GREEK}]", text)


def test_greek_letters_in_headers_are_wrapped():
    bare = []
    for path in sorted((ROOT / "templates").rglob("*.html")):
        for match in CELL.finditer(path.read_text()):
            if _bare_greek(match.group(2)):
                bare.append(f"{path.relative_to(ROOT)}: {match.group(0)[:80]}")
    assert not bare, "\n".join(bare)
    css = (ROOT / "static" / "css" / "app.css").read_text()
    assert re.search(r"\.greek\s*{\s*text-transform:\s*none", css)


def test_the_check_sees_a_bare_letter():
    assert _bare_greek("Judge wins (ρ)") == ["ρ"]
    assert _bare_greek('Judge wins (<span class="greek">ρ</span>)') == []
