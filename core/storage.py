"""Stored files on any machine: the one way code reads a file that was uploaded or saved.

Files go through Django's storage API (``STORAGES["default"]``): the filesystem under
``MEDIA_ROOT`` on one machine (the embedded default), an S3-compatible object store when web and
workers run on several (``STORAGE_BACKEND=s3``, see config/settings.py). Code that reads a stored
file names it by its storage name (``FieldFile.name``) and opens it here, never by a local path
(``FieldFile.path`` exists only on the filesystem, and only on the machine that wrote it).
"""

from __future__ import annotations

from django.core.files import File
from django.core.files.storage import Storage, default_storage, storages
from whitenoise.storage import CompressedManifestStaticFilesStorage


def open_stored(name: str, *, storage: Storage | None = None) -> File:
    """The stored file ``name`` opened for binary reading (a stream: the object store's file is
    fetched as it is read, spooled to a temporary file, not kept in memory). A missing file
    raises ``FileNotFoundError`` naming it, whatever the backend."""
    storage = storage or default_storage
    if not storage.exists(name):
        raise FileNotFoundError(f"stored file {name!r} not found in {type(storage).__name__}")
    return storage.open(name, "rb")


def storage_kind(storage: Storage | None = None) -> str:
    """``filesystem`` or ``s3`` (or the backend's class name): for pages and health checks."""
    cls = type(storage or storages["default"])
    if cls.__name__ == "FileSystemStorage":
        return "filesystem"
    if cls.__module__.startswith("storages.backends.s3"):
        return "s3"
    return cls.__name__


class StaticManifestStorage(CompressedManifestStaticFilesStorage):
    """Production static files (whitenoise's compressed manifest storage) with each name's URL
    worked out once per process: the manifest is read at start and never changes while the
    process runs, and every page asks for the same few URLs (``{% static %}`` was ~5% of the
    annotator's item page). A name missing from the manifest still raises, every time."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._urls: dict[str, str] = {}

    def url(self, name, force=False):
        if force:
            return super().url(name, force)
        try:
            return self._urls[name]
        except KeyError:
            self._urls[name] = found = super().url(name)
            return found
