"""ACME's own memlint rules: an example plugin package (docs/plugins.md)."""

from acme_memlint_rules.load_without_map_location import LoadWithoutMapLocation

__all__ = ["LoadWithoutMapLocation"]
