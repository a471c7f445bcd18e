"""Request limits in one place: who the client is (for per-address limits) and how large an
upload may be (the 413 page names the limit).

Settings:

- ``CLIENT_IP_HEADER`` (unset): the request header a trusted reverse proxy sets to the client
  address (e.g. ``HTTP_X_FORWARDED_FOR``; its first address is used). Unset: ``REMOTE_ADDR``.
- ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (Django's own): the largest non-file request body.
- ``UPLOAD_MAX_BYTES``: the largest request with files (imports stream to disk past
  ``FILE_UPLOAD_MAX_MEMORY_SIZE``); a larger one is answered 413, naming the limit.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str | None:
    """The client's address, or None when it is not a valid IP address."""
    header = getattr(settings, "CLIENT_IP_HEADER", "")
    raw = request.META.get(header, "") if header else ""
    raw = raw.split(",")[0].strip() or request.META.get("REMOTE_ADDR", "")
    try:
        return str(ipaddress.ip_address(raw))
    except ValueError:
        return None


def upload_max_bytes() -> int:
    return int(getattr(settings, "UPLOAD_MAX_BYTES", 50 * 1024 * 1024))


def human_bytes(n: int) -> str:
    """``52428800`` → ``50 MB``; ``1536`` → ``1.5 KB`` (binary units)."""
    for unit, size in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"
