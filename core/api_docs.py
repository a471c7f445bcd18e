"""The API's schema and its docs page, imported on their first request, not when a web process
starts: resolving drf-spectacular's extension targets imports pydantic and more (~6 MiB a
process), which nobody on the annotator's path needs.

Importing this module resolves drf-spectacular's extension targets (``core.schema_warmup``)
before either view runs; Python's import lock makes two first requests at once wait for one
import, so they cannot race on a lazy import (the 500 that ``schema_warmup`` prevents).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from core.schema_warmup import resolve_schema_extensions

resolve_schema_extensions()

schema = SpectacularAPIView.as_view()
# a visitor is offered the sign-in page (then comes back), not a bare 403
docs = login_required(SpectacularSwaggerSplitView.as_view(url_name="schema"))
