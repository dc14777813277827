"""The wheel ships every package of mmrhub: pyproject.toml lists packages by name, so a new subpackage left out of
the list would be missing from an installed mmrhub (its commands failing on import) while the checkout works."""

import tomllib
from _paths import ROOT


def test_every_mmrhub_package_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(path.parent.relative_to(ROOT).parts)
        for path in (ROOT / "mmrhub").rglob("__init__.py")
        if "__pycache__" not in path.parts
    }
    assert found - listed == set()
