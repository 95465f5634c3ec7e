"""memlint: find, fix and measure GPU-memory anti-patterns in PyTorch training code."""

__version__ = "0.1.0"

# Where each rule's page lives; the pages are generated into docs/rules/ from the rule modules.
DOCS_URL = "https://github.com/memlint/memlint/blob/main/docs/rules/{code}.md"
