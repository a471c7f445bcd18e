"""core.extras: a missing optional extra is an error naming the feature and the extra."""

from __future__ import annotations

import sys

import pytest

from core import extras


def test_require_imports_an_installed_module():
    assert extras.require("json", extra="x", feature="f") is sys.modules["json"]


def test_a_missing_extra_names_the_feature_and_the_install_command():
    with pytest.raises(extras.ExtraMissing) as err:
        extras.require("no_such_module_here.sub", extra="arrow", feature="Reading Parquet")
    assert str(err.value).startswith("Reading Parquet needs the optional extra 'arrow'")
    assert "pip install -e '.[arrow]'" in str(err.value)
    assert isinstance(err.value, ImportError)


def test_a_dependency_missing_inside_an_installed_extra_is_not_blamed_on_the_extra(
    tmp_path, monkeypatch
):
    (tmp_path / "half_installed.py").write_text("import no_such_dependency_here\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as err:
        extras.require("half_installed", extra="x", feature="f")
    assert not isinstance(err.value, extras.ExtraMissing)
    assert err.value.name == "no_such_dependency_here"


def test_a_submodule_of_a_missing_package_names_the_extra(monkeypatch):
    # an extra's package made unimportable, as without the extra: None in sys.modules
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(extras.ExtraMissing, match=r"'\.\[arrow\]'"):
        extras.require("pyarrow.parquet", extra="arrow", feature="Reading Parquet")
