#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    from core.text import argv_error

    problem = argv_error(sys.argv[1:])  # the one text gate on the command line (core.text)
    if problem:
        sys.stderr.write(f"error: {problem}\n")
        sys.exit(2)
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
