"""Browser helpers for the role and page-quality tests: the demo loaded with known
passwords, signing in through the login page, and what a page must never show (a placeholder
word, a page wider than the window, an empty list where the demo has data, an emoji)."""

from __future__ import annotations

import re

from django.core.management import call_command

PASSWORDS = {
    "admin": "demo-Admin-pw-1",
    "researcher": "demo-Res-pw-1",
    "annotator": "demo-Ann-pw-1",
}
USER_PASSWORD = "pw-Test-12345"  # the password of users made by the make_user fixture

# A placeholder word in visible text: a value that was missing and printed as the programming
# language's name for nothing. Plain English uses of "None" ("None available", Django's own
# empty recent-actions box) are not placeholders.
PLACEHOLDER = re.compile(r"\b(undefined|null|NaN)\b|\bNone\b(?! available)")

# The visible text of a page, the lines of its literal code (pre/code: JSON as stored, where
# null is the data's own spelling) and the values of its text fields (a box must not show null).
VISIBLE_TEXT_JS = """() => [
  document.body.innerText,
  [...document.querySelectorAll('pre, code')].map(e => e.innerText).join('\\n'),
  [...document.querySelectorAll(
      'input:not([type=hidden]):not([type=checkbox]):not([type=radio]), textarea')]
    .map(e => e.value).join('\\n'),
]"""


def load_demo(settings, tmp_path, monkeypatch) -> None:
    """The demo data and its three users (passwords from :data:`PASSWORDS`)."""
    for user, password in PASSWORDS.items():
        monkeypatch.setenv(f"DEMO_{user.upper()}_PASSWORD", password)
    settings.VAR_DIR = tmp_path
    settings.MEDIA_ROOT = tmp_path / "media"
    with open("/dev/null", "w") as quiet:
        call_command("load_demo", verbosity=0, stdout=quiet)
        call_command("ensure_demo_admin", verbosity=0, stdout=quiet)


def log_in(page, base: str, username: str, password: str | None = None) -> None:
    page.goto(base + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password or PASSWORDS.get(username, USER_PASSWORD))
    page.click("button[type=submit]")
    page.wait_for_url(base + "/")


def placeholders(page) -> list[str]:
    """Placeholder words on the page, each with a little of the text around it."""
    text, code, fields = page.evaluate(VISIBLE_TEXT_JS)
    code_lines = {line.strip() for line in code.splitlines()}
    found = []
    for line in (text + "\n" + fields).splitlines():
        if line.strip() in code_lines:
            continue
        for m in PLACEHOLDER.finditer(line):
            found.append(line[max(0, m.start() - 50) : m.end() + 30].strip())
    return found


def too_wide(page) -> int | None:
    """The page's scroll width when it is wider than the window, else ``None``."""
    width, window = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    return width if width > window else None


HEADLINES = "h1, h2, h3, .stat b, .figure b, dd, .stats dd, strong, b"
# Debian's chromium has no emoji font: an emoji shows as a box
EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2300-\u23ff\u2b00-\u2bff\ufe0f]")
EMPTY_LISTS = (".empty", "td.muted[colspan]", ".compare-empty")


def demo_data_problems(page, path: str, *, empty_allowed: bool) -> list[str]:
    """What a page of the demo must not show: "undefined" in headline type, an empty list
    (unless ``empty_allowed``: a page where the demo has nothing to list), an emoji."""
    problems = []
    for text in page.locator(HEADLINES).all_inner_texts():
        if "undefined" in text.lower():
            problems.append(f"{path}: 'undefined' in headline type: {text[:80]!r}")
    if not empty_allowed:
        for selector in EMPTY_LISTS:
            for element in page.locator(selector).all():
                if element.is_visible():
                    problems.append(f"{path}: empty list {selector}: {element.inner_text()[:80]!r}")
    body = page.locator("body").inner_text()
    if EMOJI.search(body):
        problems.append(f"{path}: emoji in the page text: {EMOJI.findall(body)[:5]}")
    return problems
