"""The 14 WebOrganizer topics used by How2Everything (seed 000 §3.1, Table 7).

Pure data, no Django: importers and scorers use it to validate and normalise topic names.
"""

from __future__ import annotations

import re

TOPICS: tuple[tuple[str, str], ...] = (
    ("art-design", "Art & Design"),
    ("crime-law", "Crime & Law"),
    ("education-jobs", "Education & Jobs"),
    ("electronics-hardware", "Electronics & Hardware"),
    ("fashion-beauty", "Fashion & Beauty"),
    ("food-dining", "Food & Dining"),
    ("health", "Health"),
    ("home-hobbies", "Home & Hobbies"),
    ("industrial", "Industrial"),
    ("religion", "Religion"),
    ("science-math-tech", "Science, Math & Technology"),
    ("sports-fitness", "Sports & Fitness"),
    ("transportation", "Transportation"),
    ("travel-tourism", "Travel & Tourism"),
)


def _key(text: str) -> str:
    text = text.lower().replace("&", " and ").replace("technology", "tech")
    text = re.sub(r"[^a-z0-9]+", " ", text)
    return " ".join(w for w in text.split() if w != "and")


_ALIASES: dict[str, str] = {}
for _slug, _name in TOPICS:
    _ALIASES[_key(_name)] = _slug
    _ALIASES[_key(_slug)] = _slug
    # WebOrganizer's own labels use underscores, e.g. "Science_Math_and_Technology".
    _ALIASES[_key(_name.replace(" ", "_"))] = _slug


def topic_slug(text: str) -> str | None:
    """Return the slug for a topic given as a name, slug or WebOrganizer label, else None."""
    if not text:
        return None
    return _ALIASES.get(_key(text))


def topic_name(slug: str) -> str:
    return dict(TOPICS)[slug]
