"""Commands of the command line that are more than a call into the pipeline: `memlint clean` and the
generator of the rule pages (`python -m memlint.commands.ruledocs`)."""
