"""`memlint rule CODE` and `memlint rules`: a rule's documentation, and the list of rules."""

from __future__ import annotations

import json

import click

from memlint.commands.common import fail
from memlint.pipeline import registry


def show_rule(code: str, output_format: str) -> None:
    """Show the documentation of one rule (by code or name)."""
    rule = registry.find_rule(code)
    if rule is None:
        reserved = _find_reserved(code)
        if reserved is None:
            raise fail(f"unknown rule '{code}' (see `memlint rules`)")
        if output_format == "json":
            click.echo(json.dumps(_reserved_json(reserved), indent=2))
        else:
            click.echo(f"# {reserved.name} ({reserved.code})\n\n{reserved.summary}; not a rule: reported by memlint itself\n\n{reserved.documentation}\n")
        return
    if output_format == "json":
        click.echo(json.dumps(_rule_json(rule), indent=2))
        return
    from memlint.commands.ruledocs import rule_text

    click.echo(rule_text(rule), nl=False)


def _rule_json(rule) -> dict:
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity.value,
        "default_enabled": registry.on_by_default(rule),
        "fix": rule.fix_safety,
        "summary": rule.summary(),
        "explanation": rule.documentation(),
    }




def _find_reserved(key: str):
    from memlint.report.common import reserved_catalogue

    return next((r for r in reserved_catalogue() if key.upper() == r.code or key.lower() == r.name), None)


def _reserved_json(reserved) -> dict:
    """A reserved code (registry.RESERVED) in the shape of _rule_json: always reported, no fix."""
    return {
        "code": reserved.code, "name": reserved.name, "severity": reserved.severity.value, "default_enabled": True,
        "fix": "none", "summary": reserved.summary, "explanation": reserved.documentation, "reserved": True,
    }  # fmt: skip


def list_rules(output_format: str) -> None:
    """List every rule, then the codes memlint reports about files themselves (ML000, ML900, ML901)."""
    from memlint.report.common import reserved_catalogue

    rules = registry.all_rules()
    reserved = reserved_catalogue()
    if output_format == "json":
        click.echo(json.dumps([_rule_json(r) for r in rules] + [_reserved_json(r) for r in reserved], indent=2))
        return
    name_width = max(len(r.name) for r in [*rules, *reserved])
    for r in rules:
        default = "" if registry.on_by_default(r) else " (off by default)"
        click.echo(f"{r.code}  {r.name:<{name_width}}  {r.severity.value:<7}  fix: {r.fix_safety:<6}  {r.summary()}{default}")
    for r in reserved:
        click.echo(f"{r.code}  {r.name:<{name_width}}  {r.severity.value:<7}  fix: {'none':<6}  {r.summary} (reserved: not a rule)")
