"""How much room memlint.pipeline.depth.LIMIT leaves: each deep construct at the limit and at twice it, run
through the whole analysis (parse, walk, positions, fixes) with the depth guard bypassed, each in a
subprocess so that a crash shows as its exit status.  Prints one row per run: outcome, wall seconds,
peak memory.

    python bench/depth_margins.py [FACTOR ...]        (default: 1 2)
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The constructs of tests/test_depth.py, plus subscripts and method calls (quadratic in libcst's parser).
CONSTRUCTS = {
    "and": "' and '.join(['a'] * n)",
    "strings": "'(' + '\\n'.join([\"'s'\"] * n) + ')'",
    "plus": "' + '.join(['a'] * n)",
    "attributes": "'a' + '.b' * n",
    "calls": "'a' + '()' * n",
    "subscripts": "'a' + '[0]' * n",
    "lambdas": "'lambda: ' * n + '0'",
    "not": "'not ' * n + 'a'",
    "conditional": "' if a else '.join(['a'] * n)",
    "power": "' ** '.join(['a'] * n)",
}

CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    from memlint.pipeline.checker import check_text
    from memlint.config import Settings
    from memlint.pipeline.fixes import fix_text
    from memlint.pipeline.registry import all_rules
    import memlint.pipeline.engine
    memlint.pipeline.engine.too_complex = lambda *args, **kwargs: None  # the guard, bypassed for fix_text too
    n = {n}
    expression = {expression}
    text = ("import torch\\ntotal = 0.0\\nfor x, y in val_loader:\\n    loss = criterion(model(x), y)\\n"
            + "    z = " + expression.replace("\\n", "\\n    ") + "\\n    total += loss\\nprint(total)\\n")
    settings = Settings(enabled=frozenset(rule.code for rule in all_rules()))
    started = time.perf_counter()
    codes = sorted({{d.code for d in check_text(text, "deep.py", settings, depth_checked=True)}})
    fixed = fix_text(text, "deep.py", settings, unsafe=True)
    print(json.dumps({{"codes": codes, "fixed": sum(fixed.fixed.values()), "seconds": time.perf_counter() - started,
                      "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}}))
    """
)


def measure(expression: str, n: int) -> str:
    child = CHILD.format(n=n, expression=expression)
    try:
        done = subprocess.run([sys.executable, "-c", child], cwd=ROOT, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "timed out (600 s)"
    if done.returncode != 0:
        return f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:] if done.stderr.strip() else ''}"
    row = json.loads(done.stdout.strip().splitlines()[-1])
    return f"{','.join(row['codes']) or '-'} fixed {row['fixed']}  {row['seconds']:.1f} s  {row['peak_mib']} MiB"


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from memlint.pipeline.depth import LIMIT

    factors = [float(arg) for arg in sys.argv[1:]] or [1.0, 2.0]
    for name, expression in CONSTRUCTS.items():
        for factor in factors:
            n = int(LIMIT * factor)
            print(f"{name:12} {n:6}: {measure(expression, n)}", flush=True)
