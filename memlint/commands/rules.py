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
        raise fail(f"unknown rule '{code}' (see `memlint rules`)")
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




def list_rules(output_format: str) -> None:
    """List every rule."""
    rules = registry.all_rules()
    if output_format == "json":
        click.echo(json.dumps([_rule_json(r) for r in rules], indent=2))
        return
    name_width = max(len(r.name) for r in rules)
    for r in rules:
        default = "" if registry.on_by_default(r) else " (off by default)"
        click.echo(f"{r.code}  {r.name:<{name_width}}  {r.severity.value:<7}  fix: {r.fix_safety:<6}  {r.summary()}{default}")
