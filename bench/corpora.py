"""Download and unpack the pinned real-world corpora that the precision review, the benchmarks and the
reliability runs use.  `python bench/corpora.py [NAME ...]` prints the unpacked source directories.

Sources come from `pip download --no-deps` (wheels, or an sdist when there is no wheel) and are
unpacked under bench/corpora/ (git-ignored).  Nothing here is imported by memlint itself.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

CORPORA = {
    "timm": "timm==1.0.31",
    "transformers": "transformers==5.23.0",
    "pytorch-lightning": "pytorch-lightning==2.6.6",
    "torchvision": "torchvision==0.29.2",
}
ROOT = Path(__file__).resolve().parent / "corpora"


def fetch(name: str) -> Path:
    """The unpacked source directory of corpus `name`, downloading it the first time."""
    requirement = CORPORA[name]
    target = ROOT / requirement.replace("==", "-")
    if (target / ".complete").exists():
        return target
    ROOT.mkdir(parents=True, exist_ok=True)
    with open(ROOT / ".lock", "w") as lock:  # several benchmarks may fetch at the same time
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / ".complete").exists():
            _download_and_unpack(requirement, name, target)
    return target


def _download_and_unpack(requirement: str, name: str, target: Path) -> None:
    downloads = ROOT / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", str(downloads), requirement],
        check=True,
    )
    version = requirement.split("==")[1]
    stem = name.replace("-", "_")
    prefix = f"{stem}_{version}".lower()  # wheel and sdist names both normalise to name_version
    archives = [p for p in downloads.iterdir() if p.name.lower().replace("-", "_").startswith(prefix)]
    if not archives:
        raise SystemExit(f"pip download produced no archive for {requirement}")
    archive = sorted(archives, key=lambda p: p.suffix != ".whl")[0]  # prefer the wheel
    target.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as wheel:
            wheel.extractall(target)
    else:
        with tarfile.open(archive) as sdist:
            sdist.extractall(target, filter="data")
    (target / ".complete").touch()


def main(argv: list[str]) -> int:
    for name in argv or list(CORPORA):
        print(fetch(name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
