"""Every named route resolves back to itself: no pattern shadows another (the root URLconf
puts the annotator flow first: it is the hottest path, and Django tries patterns in
order), and the participant flow is found without walking the other apps' patterns."""

from __future__ import annotations

import re

import pytest
from django.urls import Resolver404, URLPattern, URLResolver, get_resolver, resolve

SAMPLES = {"int": "7", "slug": "a-study", "str": "x", "path": "a/b", "uuid": None}


def _walk(patterns, prefix="", namespace=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            ns = f"{namespace}{p.namespace}:" if p.namespace else namespace
            yield from _walk(p.url_patterns, prefix + str(p.pattern), ns)
        elif isinstance(p, URLPattern) and p.name:
            yield namespace + p.name, prefix + str(p.pattern)


def _sample(route: str) -> str | None:
    """A concrete path for a route (DRF's router gives regexes: their groups get "7"); None for
    a format-suffix variant or a converter with no sample here."""
    if "(?P<format>" in route:
        return None
    # a group's first alternative (the admin's app list) or "7"
    group = re.compile(r"\(\?P<\w+>([^)]*)\)")
    out = group.sub(lambda m: m[1].split("|")[0] if "|" in m[1] else "7", route)
    out = out.replace("^", "").replace("$", "")
    out = out.replace("\\.", ".")
    for conv, name in re.findall(r"<(?:(\w+):)?(\w+)>", out):
        value = SAMPLES.get(conv or "str")
        if value is None:
            return None
        out = re.sub(rf"<(?:{conv}:)?{name}>", value, out, count=1)
    return "/" + out


ROUTES = sorted(
    {(name, _sample(route)) for name, route in _walk(get_resolver().url_patterns)},
    key=lambda r: (r[0], r[1] or ""),
)


@pytest.mark.parametrize(("name", "path"), [r for r in ROUTES if r[1] is not None])
def test_each_named_route_resolves_to_itself(name, path):
    match = resolve(path)
    # a route may share its view and pattern with an alias (e.g. a format suffix); what
    # matters is that no *other* pattern earlier in the list took the path
    assert match.view_name == name or _sample_of(match.view_name) == path, (
        f"{path} ({name}) is taken by {match.view_name}"
    )


def _sample_of(name: str) -> str | None:
    return dict(ROUTES).get(name)


def test_participant_flow_is_tried_first():
    """The annotator's item page is matched after trying at most a handful of patterns."""
    tried = []
    root = get_resolver()
    for p in root.url_patterns:
        tried.append(p)
        try:
            if isinstance(p, URLResolver) and p.resolve("study/s/a-study/item/"):
                break
        except Resolver404:
            continue
    assert len(tried) <= 2, [str(p.pattern) for p in tried]
    assert resolve("/study/s/a-study/item/").view_name == "annotation:item"
