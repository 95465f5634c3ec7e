"""Where memlint meets other tools and workflows: code review on a diff (review, gitdiff), standard
input for editors, the flake8 plugin, and adopting memlint on legacy code (noqa, baseline, adoption).
Each builds on the pipeline; nothing in the pipeline imports from here (tests/test_import_graph.py)."""
