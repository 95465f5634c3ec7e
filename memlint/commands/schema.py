"""The JSON Schema of `[tool.memlint]` (and of memlint.toml), from config.SCHEMA: every key, what it
accepts and its default, for editors that validate TOML (taplo, Even Better TOML, SchemaStore).

    python -m memlint.commands.schema > docs/memlint.schema.json      (`make docs` does it)
"""

from __future__ import annotations

import json
from typing import Any

from memlint.config import SCHEMA

SCHEMA_ID = "memlint.schema.json"


def json_schema() -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for key in sorted(SCHEMA):
        check, default = SCHEMA[key]
        accepted = dict(getattr(check, "json_schema", {}))
        if default is not None:
            accepted["default"] = default
        properties[key] = accepted
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": SCHEMA_ID,
        "title": "memlint configuration ([tool.memlint] in pyproject.toml, or memlint.toml)",
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
    }


def main() -> None:
    print(json.dumps(json_schema(), indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
