"""An upload kept across a refused form: when the new-batch form is refused for another field,
the file already sent is stored (``mining/pending/``) and named by a signed token that the form
carries back, so the person need not choose the file again."""

from __future__ import annotations

import secrets
from pathlib import PurePosixPath

from django.core import signing
from django.core.files import File
from django.core.files.storage import default_storage

_SALT = "mining.kept_upload"
MAX_AGE_SECONDS = 24 * 3600  # a kept file is offered again for a day


def upload_keep(*, upload) -> str:
    """Store ``upload`` and return the signed token that names it."""
    name = PurePosixPath(getattr(upload, "name", "") or "upload").name[:200]
    path = default_storage.save(f"mining/pending/{secrets.token_hex(8)}/{name}", upload)
    return signing.dumps({"path": path, "name": name}, salt=_SALT)


def _read(token: str) -> dict | None:
    try:
        value = signing.loads(token, salt=_SALT, max_age=MAX_AGE_SECONDS)
    except signing.BadSignature:  # tampered with or expired: as if none was kept
        return None
    if not isinstance(value, dict) or not str(value.get("path", "")).startswith("mining/pending/"):
        return None
    return value if default_storage.exists(value["path"]) else None


def kept_name(token: str) -> str:
    """The kept file's name ("" when the token names none)."""
    value = _read(token or "")
    return value["name"] if value else ""


def kept_upload(token: str) -> File | None:
    """The kept file, open, under its own name; None when the token names none."""
    value = _read(token or "")
    if value is None:
        return None
    return File(default_storage.open(value["path"], "rb"), name=value["name"])


def kept_forget(token: str) -> None:
    """Delete the kept file once a batch has its own copy."""
    value = _read(token or "")
    if value is not None:
        default_storage.delete(value["path"])
