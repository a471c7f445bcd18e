"""A fresh web process's first schema requests, two at once (tests/core/test_schema_warmup.py):
run as ``python -m tests.support.schema_race_probe USERNAME`` with ``DATABASE_URL``
pointing at a database holding that researcher. The process starts as a web worker does
(``django.setup()``, the URLconf imported), notes whether drf-spectacular's schema machinery
(``core.api_docs``) and pydantic were imported by then, then two threads, signed in as that user, fetch
``/api/schema/`` at the same moment. Prints one JSON object."""

from __future__ import annotations

import json
import os
import sys
import threading


def main() -> int:
    username = sys.argv[1]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.db import connections
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports the URLconf and every view, as a worker does
    at_start = sorted(m for m in ("core.api_docs", "pydantic") if m in sys.modules)
    setup_test_environment()  # the test client's host "testserver"
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.get(username=username)
    clients = [Client(), Client()]
    for c in clients:
        c.force_login(user)
    gate, statuses = threading.Barrier(2), []

    def fetch(c):
        gate.wait()
        statuses.append(c.get("/api/schema/", {"format": "json"}).status_code)
        connections.close_all()

    threads = [threading.Thread(target=fetch, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    from core.schema_warmup import extension_registries

    left = [
        e.__name__
        for registry in extension_registries()
        for e in registry._registry
        if isinstance(e.target_class, str)
    ]
    print(json.dumps({"at_start": at_start, "statuses": sorted(statuses), "left": left}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
