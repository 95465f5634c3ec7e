"""memlint's built-in rules, one folder each, named after the rule (`ml001_accumulated_graph/`):

    meta.py    META: code, name, on by default, options with their defaults, trigger words
               (read by memlint.pipeline.registry without importing the rule or libcst)
    screen.py  optional: a necessary condition of the rule reporting, on CPython's AST
               (memlint.prescreen asks it before libcst parses a file)
    rule.py    the Rule class (`meta = META`): its docs, VALID / INVALID examples and checks

Adding a rule means adding a folder (and generating its docs page); docs/adding-a-rule.md.
"""
