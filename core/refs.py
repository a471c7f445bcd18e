"""Dataset references, one meaning everywhere: ``name`` or ``name@version``.

- The **last** ``@`` splits name and version, so a name may itself hold ``@``:
  ``"a@b@v3"`` is name ``"a@b"``, version ``"v3"``.
- No ``@`` means no version (``version`` is ``None``): the caller's default applies (the only
  version of the name when looking one up, ``"v1"`` when creating, every version when filtering).
- An empty reference, an empty name (``"@v2"``) or an empty version after ``@`` (``"bench@"``)
  is a :class:`ValueError` that names the problem.
- Whitespace around the whole reference is ignored; inside it, it is part of the name or version.

Pure: no Django. Looking a reference up is the benchmarks app's
(``benchmarks.selectors.catalog.dataset_resolve``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DatasetRef:
    """A parsed dataset reference; ``version`` is ``None`` when the text gave none."""

    name: str
    version: str | None = None

    def __str__(self) -> str:
        return self.name if self.version is None else f"{self.name}@{self.version}"

    def with_default(self, version: str | None) -> DatasetRef:
        """This reference, with ``version`` filled in when it has none."""
        return self if self.version is not None else DatasetRef(self.name, version)


def parse_dataset_ref(text: str) -> DatasetRef:
    """``"bench"`` → ``DatasetRef("bench", None)``; ``"bench@v2"`` → ``DatasetRef("bench", "v2")``.

    Raises :class:`ValueError` naming the problem for an empty reference, name or version.
    """
    if not isinstance(text, str):
        raise ValueError(f"a dataset reference is text (name or name@version), got {text!r}")
    ref = text.strip()
    if not ref:
        raise ValueError("the dataset reference is empty; give name or name@version")
    name, sep, version = ref.rpartition("@")
    if not sep:
        return DatasetRef(ref, None)
    if not name:
        raise ValueError(f"dataset reference {ref!r} has no name before '@'")
    if not version:
        raise ValueError(f"dataset reference {ref!r} has no version after '@'")
    return DatasetRef(name, version)
