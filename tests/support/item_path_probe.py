"""What a fresh web process holds after serving an annotator's item path: run as
``python -m tests.support.item_path_probe SLUG`` with ``DATABASE_URL`` pointing at a database
holding the open study ``SLUG`` (critical failure, no minimum time). The process starts as a
web worker does (``django.setup()``, the URLconf imported), then one new Prolific participant
enters, consents, reads the codebook, loads the next item and saves it, through Django's test
client (the full middleware stack). Prints one JSON object: the status of each request, the
heavy modules (:data:`HEAVY`) imported by then, and this process's memory (RSS/USS/PSS, MiB).

tests/core/test_web_process_imports.py asserts no heavy module is imported;
tests/perf/bench_memory.py reports the memory.
"""

from __future__ import annotations

import json
import os
import re
import sys
import traceback

# imported only where statistics, models or exports are computed, never by the item path
HEAVY = (
    "numpy",
    "scipy",
    "krippendorff",
    "statsmodels",
    "pandas",
    "ppi_py",
    "sklearn",
    "torch",
    "transformers",
    "sentence_transformers",
    "keybert",
    "onnxruntime",
    "tokenizers",
    "pyarrow",
    "nltk",
    "rouge_score",
    "vllm",
    "pydantic",  # through drf-spectacular's extension targets: loaded with the API schema
)

_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
_ACTION = re.compile(r'id="item-form" method="post" action="([^"]+)"')


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIRST_IMPORT: dict[str, list[str]] = {}


class _Watch:
    """A meta-path finder that finds nothing: it notes which project lines imported each heavy
    module first (the failing test names them)."""

    def find_spec(self, name, path=None, target=None):
        if name in HEAVY and name not in FIRST_IMPORT:
            FIRST_IMPORT[name] = [
                f"{os.path.relpath(f.filename, ROOT)}:{f.lineno}"
                for f in traceback.extract_stack()
                if f.filename.startswith(ROOT)
                and "/.venv/" not in f.filename
                and f.filename != os.path.abspath(__file__)
            ][-6:]
        return None


def heavy_loaded() -> list[str]:
    return sorted(name for name in sys.modules if name.split(".")[0] in HEAVY and "." not in name)


def memory_mib() -> dict[str, float]:
    import psutil

    info = psutil.Process().memory_full_info()
    return {k: round(getattr(info, k) / 2**20, 1) for k in ("rss", "uss", "pss")}


def serve_item_path(slug: str, pid: str = "PROBE1") -> list[tuple[str, int]]:
    from django.test import Client

    c = Client()
    base = f"/study/s/{slug}"
    done = []
    r = c.get(f"{base}/", {"PROLIFIC_PID": pid, "STUDY_ID": "PROBE", "SESSION_ID": f"s-{pid}"})
    done.append(("enter", r.status_code))
    r = c.get(f"{base}/consent/")
    done.append(("consent page", r.status_code))
    r = c.post(f"{base}/consent/", {"consent": "agree"})
    done.append(("consent", r.status_code))
    r = c.post(f"{base}/codebook/")
    done.append(("codebook", r.status_code))
    r = c.get(f"{base}/item/")
    done.append(("item page", r.status_code))
    page = r.content.decode()
    action = _ACTION.search(page)
    form = {
        "goal_ack": "1",
        "read": re.findall(r'name="read" value="(\d+)"', page),
        "read_l1": re.findall(r'name="read_l1" value="(\d+)"', page),
        "choice": "none",
        "comments": "",
        "active_ms": "1000",
    }
    r = c.post(action.group(1) if action else f"{base}/item/", form)
    done.append(("save", r.status_code))
    r = c.get(f"{base}/item/")
    done.append(("next item page", r.status_code))
    return done


def main() -> int:
    slug = sys.argv[1]
    sys.meta_path.insert(0, _Watch())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.test.utils import setup_test_environment
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports the URLconf and every view, as a worker does
    after_start = heavy_loaded()
    setup_test_environment()  # the test client's host "testserver"
    statuses = serve_item_path(slug)
    print(
        json.dumps(
            {
                "urlconf": settings.ROOT_URLCONF,
                "heavy_at_start": after_start,
                "heavy": heavy_loaded(),
                "imported_by": FIRST_IMPORT,
                "statuses": statuses,
                "memory_mib": memory_mib(),
                "modules": len(sys.modules),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
