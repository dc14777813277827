"""The wheel ships every package of mmrhub: pyproject.toml lists packages by name, so a new subpackage left out of
the list would be missing from an installed mmrhub (its commands failing on import) while the checkout works; and
every file of the package that is not Python (the card's template) is package data, or the wheel leaves it out."""

import fnmatch

import tomllib
from _paths import ROOT

SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_mmrhub_package_is_listed():
    listed = set(SETUPTOOLS["packages"])
    found = {
        ".".join(path.parent.relative_to(ROOT).parts)
        for path in (ROOT / "mmrhub").rglob("__init__.py")
        if "__pycache__" not in path.parts
    }
    assert found - listed == set()
    assert sorted(SETUPTOOLS["packages"]) == sorted(listed)  # each listed once


def test_every_file_of_the_package_that_is_not_python_is_package_data():
    """Under mmrhub/ itself (the metric folders and the samples are mapped in from metrics/ and data/)."""
    data = SETUPTOOLS["package-data"]
    unshipped = []
    for path in sorted((ROOT / "mmrhub").rglob("*")):
        if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
            continue
        package = ".".join(path.parent.relative_to(ROOT).parts)
        if not any(fnmatch.fnmatch(path.name, pattern) for pattern in data.get(package, [])):
            unshipped.append(str(path.relative_to(ROOT)))
    assert unshipped == []
    assert (ROOT / "mmrhub" / "export" / "dataset_card_template.md").is_file()
