"""Logging filters (settings ``LOGGING``), one home.

:class:`ExpectedRefusals` sits on the ``django.request`` logger: a 4xx answer (a 403 for a role
that may not open a page, a 404 for an unknown address) is an expected refusal, logged as ONE
line (``Forbidden (Permission denied): /admin/…``) instead of the line plus a full traceback
Django attaches. A 5xx keeps its traceback: it is always a bug.
"""

from __future__ import annotations

import logging


class ExpectedRefusals(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if status is not None and 400 <= int(status) < 500:
            record.exc_info = None
            record.exc_text = None
        return True
