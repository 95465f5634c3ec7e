"""A longer run of the generated-program property test (tests/test_fuzz_generated.py).

    python bench/fuzz.py [EXAMPLES]        (default 2000; `make fuzz` runs this)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

if __name__ == "__main__":
    examples = sys.argv[1] if len(sys.argv) > 1 else "2000"
    env = {**os.environ, "MEMLINT_FUZZ_EXAMPLES": examples}
    # Random draws: the suite's own profile (tests/conftest.py) replays the same examples every run.
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-profile=memlint-explore",
               "tests/test_fuzz_generated.py"]  # fmt: skip
    raise SystemExit(subprocess.call(command, cwd=ROOT, env=env))
