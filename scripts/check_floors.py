"""Each floor pyproject.toml declares is the version installed: run in `make test-lowest`'s venv.

Run: .venv-lowest/bin/python scripts/check_floors.py [EXTRA ...]   (default: test)
`uv pip install --resolution lowest-direct` installs the lowest version of each direct
dependency that resolves; when no release at the floor can (it caps numpy below 2, it is
yanked, it has no wheel for this Python), uv takes a higher one without a word, and the
tests then prove a floor nobody installed. This reads the floors from pyproject.toml itself
(so it cannot drift from them) and fails, naming each, when one is not the version installed.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


def floors(extras: list[str]) -> list[tuple[Requirement, Version]]:
    """The direct requirements of [project] and the named extras that have a `>=` floor."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = list(project["dependencies"])
    for extra in extras:
        lines += project["optional-dependencies"][extra]
    found = []
    for line in lines:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        lows = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
        if lows:
            found.append((requirement, max(lows)))
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("extras", nargs="*", default=["test"], help="extras installed (test)")
    a = ap.parse_args()
    wrong = []
    print(f"{'requirement':<24} {'floor':>10} {'installed':>10}")
    for requirement, floor in floors(a.extras):
        try:
            installed = version(requirement.name)
        except PackageNotFoundError:
            installed = "none"
        print(f"{requirement.name:<24} {floor!s:>10} {installed:>10}")
        if installed == "none" or Version(installed) != floor:
            wrong.append(
                f"{requirement} declares {floor} but {installed} is installed: no release at "
                f"the floor resolved here, so raise it to the lowest that does (and passes)"
            )
    for line in wrong:
        print(f"check_floors: {line}", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
