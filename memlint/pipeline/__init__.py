"""The core pipeline, in the order a run goes: which files (files); reading them (source, and
notebooks, read as one module of their code cells); the project pass (prepare, project); the cheap
screens and guards (engine, depth; the screens themselves live in memlint.prescreen and in each
rule's screen.py); the full analysis of one file (checker, traversal, tree); positions, text helpers
(text), suppressions, the findings about a file itself (reserved: ML000, ML900), fixes and their
writing (fixes, tempfiles); and the run over many files (runner, workers, cache). The rule registry
is here too: it is how the engine finds the rules."""
