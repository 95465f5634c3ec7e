"""memlint: find, fix and measure GPU-memory anti-patterns in PyTorch training code."""

__version__ = "0.1.0"

# Where each finding's help link points: a template with {code} (e.g.
# "https://docs.example.org/memlint/rules/{code}.html"), set by whoever hosts the rule pages. Unset,
# findings carry no link (the project publishes no web pages of its own): `memlint rule CODE` prints
# the same page from the installed package.
DOCS_URL_VARIABLE = "MEMLINT_DOCS_URL"
