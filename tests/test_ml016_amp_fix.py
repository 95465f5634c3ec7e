"""ML016's fix on whole files: several calls through one import line are fixed together, the result
parses, and a second lint finds nothing."""

from __future__ import annotations

import libcst as cst

from memlint.pipeline.engine import lint_text
from memlint.pipeline.fixes import fix_text
from memlint.pipeline.registry import find_rule
from memlint.testing import settings_for

RULE = find_rule("ML016")


def _fix(source: str) -> str:
    settings = settings_for(RULE)
    outcome = fix_text(source, "train.py", settings, unsafe=False)
    cst.parse_module(outcome.text)
    assert lint_text(outcome.text, "train.py", settings) == []
    return outcome.text


def test_source_article_import_line_becomes_import_torch():
    source = (
        "from torch.cuda.amp import autocast, GradScaler\n"
        "model = Net().cuda()\n"
        "scaler = GradScaler()\n"
        "for input, target in data:\n"
        "    with autocast():\n"
        "        output = model(input)\n"
        "    scaler.scale(loss).backward()\n"
    )
    assert lint_text(source, "train.py", settings_for(RULE)).__len__() == 2
    assert _fix(source) == (
        "import torch\n"
        "model = Net().cuda()\n"
        'scaler = torch.amp.GradScaler("cuda")\n'
        "for input, target in data:\n"
        '    with torch.amp.autocast("cuda"):\n'
        "        output = model(input)\n"
        "    scaler.scale(loss).backward()\n"
    )


def test_unused_import_line_removed_when_torch_is_imported():
    source = (
        "import torch\n"
        "from torch.nn.functional import mse_loss\n"
        "from torch.cuda.amp import autocast, GradScaler\n"
        "scaler = GradScaler()\n"
        "with autocast(enabled=True):\n"
        "    loss = mse_loss(net(x), y)\n"
    )
    assert _fix(source) == (
        "import torch\n"
        "from torch.nn.functional import mse_loss\n"
        'scaler = torch.amp.GradScaler("cuda")\n'
        'with torch.amp.autocast("cuda", enabled=True):\n'
        "    loss = mse_loss(net(x), y)\n"
    )


def test_name_with_other_uses_stays_in_the_import():
    source = (
        "import torch\n"
        "from torch.cuda.amp import autocast, GradScaler\n"
        "scaler = GradScaler()\n"
        "assert isinstance(scaler, GradScaler)\n"
        "with autocast():\n"
        "    pass\n"
    )
    # `torch.amp.GradScaler("cuda")` is not an instance of the deprecated subclass: the assert would
    # fail, so the fix is unsafe (issue 25), and the safe run leaves the file as it is.
    settings = settings_for(RULE)
    assert fix_text(source, "train.py", settings, unsafe=False).text == source
    assert fix_text(source, "train.py", settings, unsafe=True).text == (
        "import torch\n"
        "from torch.cuda.amp import GradScaler\n"
        'scaler = torch.amp.GradScaler("cuda")\n'
        "assert isinstance(scaler, GradScaler)\n"
        'with torch.amp.autocast("cuda"):\n'
        "    pass\n"
    )


def test_cli_fixes_the_file(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "train.py"
    path.write_text("import torch\nscaler = torch.cuda.amp.GradScaler(2.0**10)\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "memlint", "check", str(path), "--select", "ML016", "--fix", "--no-cache"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert path.read_text(encoding="utf-8") == 'import torch\nscaler = torch.amp.GradScaler("cuda", 2.0**10)\n'


def test_a_name_another_file_imports_from_here_stays_imported(tmp_path):
    """Issue 25: `from torch.cuda.amp import autocast` in helpers.py, which train.py imports from
    there; removing it made `import train` raise ImportError.  Through the command, both files."""
    import subprocess
    import sys

    from click.testing import CliRunner

    from memlint.cli import main

    (tmp_path / "helpers.py").write_text(
        "import torch\nfrom torch.cuda.amp import autocast\ndef run(model, x):\n    with autocast():\n        return model(x)\n"
    )
    (tmp_path / "train.py").write_text("from helpers import autocast, run\n")
    (tmp_path / "star.py").write_text("from helpers import *\nassert autocast is not None\n")
    result = CliRunner().invoke(main, ["check", "--select", "ML016", "--fix", "--no-cache", str(tmp_path / "helpers.py"), str(tmp_path / "train.py")])
    assert result.exit_code == 0, result.output
    fixed = (tmp_path / "helpers.py").read_text()
    assert 'with torch.amp.autocast("cuda"):' in fixed and "from torch.cuda.amp import autocast\n" in fixed
    for importer in ("train", "star"):
        done = subprocess.run([sys.executable, "-c", f"import {importer}"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr


def test_a_star_import_of_the_module_keeps_its_imports(tmp_path):
    from click.testing import CliRunner

    from memlint.cli import main

    (tmp_path / "helpers.py").write_text("import torch\nfrom torch.cuda.amp import autocast\nwith autocast():\n    pass\n")
    (tmp_path / "star.py").write_text("from helpers import *\n")
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "helpers.py").write_text((tmp_path / "helpers.py").read_text())
    CliRunner().invoke(main, ["check", "--select", "ML016", "--fix", "--no-cache", str(tmp_path / "helpers.py"), str(tmp_path / "star.py")])
    CliRunner().invoke(main, ["check", "--select", "ML016", "--fix", "--no-cache", str(alone / "helpers.py")])
    assert "from torch.cuda.amp import autocast\n" in (tmp_path / "helpers.py").read_text()
    assert "from torch.cuda.amp import autocast" not in (alone / "helpers.py").read_text()  # nobody imports from it
