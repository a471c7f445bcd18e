"""Create (or keep) the demo superuser ``admin`` and print the demo logins.

The password comes from ``DEMO_ADMIN_PASSWORD``, else from ``var/demo-admin-password``, else it
is generated once and stored there (mode 0600). The researcher and annotator logins created by
``load_demo`` are printed too.
"""

from __future__ import annotations

import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from demo.management.commands.load_demo import (
    DEMO_USERS,
    demo_password,
    demo_password_file,
    demo_user_ensure,
)


def login_lines(*, base_url: str) -> list[str]:
    """The demo logins that exist, one line each, for printing."""
    base_url = base_url.rstrip("/") + "/"
    existing = set(
        get_user_model().objects.filter(username__in=DEMO_USERS).values_list("username", flat=True)
    )
    lines = [f"  Log in at {base_url}accounts/login/"]
    for username, (role, env_var) in DEMO_USERS.items():
        if username not in existing:
            continue
        password = demo_password(username=username, create=False)
        where = (
            env_var
            if os.environ.get(env_var, "").strip()
            else str(demo_password_file(username=username))
        )
        lines.append(f"    {role:<11} user: {username:<11} password: {password}   (from {where})")
    if existing != set(DEMO_USERS):
        lines.append("    (run 'manage.py load_demo' for the researcher and annotator demo users)")
    return lines


class Command(BaseCommand):
    help = "Create or keep the demo superuser 'admin' (group admin) and print the demo logins."

    def add_arguments(self, parser):
        # the port `make demo PORT=8123` serves on, for the URL printed with the logins
        port = os.environ.get("PORT", "8000")
        parser.add_argument(
            "--url",
            default=f"http://127.0.0.1:{port}/",
            help="Base URL to print (default: %(default)s).",
        )

    def handle(self, *args, **options):
        _, created = demo_user_ensure(username="admin", superuser=True)
        self.stdout.write(
            self.style.SUCCESS(f"Demo admin 'admin' {'created' if created else 'kept'}.")
        )
        for line in login_lines(base_url=options["url"]):
            self.stdout.write(line)
