"""The package list, the one build setting pyproject.toml cannot express.

The rule catalogue lives in the top-level rules/ directory and ships as `memlint.rules`, one
subpackage per rule folder (`rules/ml001_accumulated_graph/` -> `memlint.rules.ml001_accumulated_graph`);
the list is computed so that adding a rule means adding its folder.  Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup


def packages() -> list[str]:
    core = find_packages(".", include=["memlint", "memlint.*"])
    rules = ["memlint.rules." + name for name in find_packages("rules")]
    return core + ["memlint.rules"] + rules


if __name__ == "__main__":
    setup(packages=packages())
