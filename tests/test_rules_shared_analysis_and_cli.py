"""ML002-ML006 beyond their embedded examples: the shared analysis they rely on, and the CLI as
users call it (configuration of ML006's budget, fixes written to disk)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from memlint.analysis import optimizers
from memlint.analysis.constants import fold, fold_int, function_env, literal_bool, module_env
from memlint.analysis.evaluation import is_evaluation_function_name, is_evaluation_loader


def memlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memlint", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


# ---------------------------------------------------------------------------- constant folding


def test_fold_literals_arithmetic_and_module_constants():
    module = cst.parse_module("C = 512\nS = 7\nN = C * S ** 2\nX = C\nX = 3\n")
    env = module_env(module)
    assert fold(cst.parse_expression("N"), env) == 512 * 49
    assert fold(cst.parse_expression("-(4 + 4) // 3"), env) == -3
    assert fold(cst.parse_expression("X"), env) is None  # bound twice: unknown
    assert fold(cst.parse_expression("cfg.width"), env) is None
    assert fold(cst.parse_expression("2 ** 100000"), env) is None  # refuses to compute absurd sizes


def test_literal_bool_reads_only_the_two_literals():
    assert literal_bool(cst.parse_expression("True")) is True
    assert literal_bool(cst.parse_expression("False")) is False
    for code in ("inplace", "1", "None", "not False", "flags.inplace"):
        assert literal_bool(cst.parse_expression(code)) is None


def test_function_env_uses_defaults_unless_rebound():
    function = cst.parse_module(
        textwrap.dedent(
            """
            def __init__(self, width=256, depth=4, classes=10):
                hidden = width * 4
                if depth > 2:
                    classes = 100
            """
        )
    ).body[0]
    env = function_env(function, {"width": cst.parse_expression("1")})
    assert fold_int(cst.parse_expression("hidden"), env) == 1024  # the default hides the module constant
    assert fold_int(cst.parse_expression("classes"), env) is None  # rebound behind a condition


# ---------------------------------------------------------------------------- evaluation context


@pytest.mark.parametrize("name", ["evaluate", "validate", "eval_epoch", "run_test", "predict", "inference", "evalModel", "test"])
def test_evaluation_function_names(name):
    assert is_evaluation_function_name(name)


@pytest.mark.parametrize("name", ["train", "test_forward_shape", "validate_config", "_validate_args", "get_test_dataloader", "interval"])
def test_names_that_are_not_evaluation(name):
    assert not is_evaluation_function_name(name)


def test_evaluation_loaders():
    assert is_evaluation_loader(cst.parse_expression("tqdm(self.val_loader, desc='val')")) == "val_loader"
    assert is_evaluation_loader(cst.parse_expression("enumerate(test_dl)")) == "test_dl"
    assert is_evaluation_loader(cst.parse_expression("trainer.dev_dataloader()")) == "dev_dataloader"
    assert is_evaluation_loader(cst.parse_expression("testloader")) == "testloader"
    assert is_evaluation_loader(cst.parse_expression("train_loader")) is None
    assert is_evaluation_loader(cst.parse_expression("trainloader")) is None
    assert is_evaluation_loader(cst.parse_expression("tests")) is None


# ---------------------------------------------------------------------------- the optimizer table


def test_optimizer_table_matches_measured_state():
    table = optimizers.state_bytes_per_param
    assert table("torch.optim.SGD") == 0
    assert table("torch.optim.SGD", momentum=True) == 4
    assert table("torch.optim.RMSprop") == 4
    assert table("torch.optim.Adagrad") == 4
    for name in ("Adam", "AdamW", "NAdam", "RAdam", "Adamax"):
        assert table(f"torch.optim.{name}") == 8
    assert table("torch.optim.Adam", amsgrad=True) == 12
    assert table("torch.optim.adam.Adam") == 8  # the defining module
    assert table("torch.optim.Adafactor") < 0.1
    assert table("bitsandbytes.optim.AdamW8bit") == 2
    assert table("my.Optimizer") is None
    assert optimizers.training_bytes_per_param(8) == 16


# ---------------------------------------------------------------------------- CLI


BIG_MODEL = """\
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self, width=16384):
        super().__init__()
        self.fc = nn.Linear(width, width)

model = Net()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
"""


def test_ml006_is_silent_without_a_budget_and_reports_with_one(tmp_path):
    (tmp_path / "train.py").write_text(BIG_MODEL)
    (tmp_path / "pyproject.toml").write_text("[tool.memlint]\n")
    quiet = memlint("check", "train.py", "--select", "ML006", "--no-cache", "--output-format", "concise", cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr

    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\ngpu-memory = "4GiB"\nmemory-headroom = 0.25\n')
    loud = memlint("check", "train.py", "--select", "ML006", "--no-cache", "--output-format", "concise", cwd=tmp_path)
    assert loud.returncode == 1
    assert "train.py:10:13: ML006" in loud.stdout
    assert "268,451,840 parameters" in loud.stdout
    assert "needs 4.00 GiB" in loud.stdout and "budget of 3.00 GiB" in loud.stdout  # a quarter kept free
    assert "memlint estimate" in loud.stdout


def test_ml006_rejects_a_budget_it_cannot_read(tmp_path):
    (tmp_path / "train.py").write_text(BIG_MODEL)
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\ngpu-memory = "lots"\n')
    result = memlint("check", "train.py", "--select", "ML006", "--no-cache", cwd=tmp_path)
    assert result.returncode == 2
    assert "gpu-memory" in result.stderr and "Traceback" not in result.stderr


def test_ml002_unsafe_fix_and_inference_mode_from_config(tmp_path):
    source = "import torch as th\n\ndef evaluate(model, loader):\n    for x in loader:\n        model(x)\n"
    (tmp_path / "evaluate.py").write_text(source)
    (tmp_path / "pyproject.toml").write_text("[tool.memlint]\nprefer-inference-mode = true\n")
    safe_only = memlint("check", "evaluate.py", "--select", "ML002", "--fix", "--no-cache", cwd=tmp_path)
    assert (tmp_path / "evaluate.py").read_text() == source  # the fix is unsafe
    assert safe_only.returncode == 1
    fixed = memlint("check", "evaluate.py", "--select", "ML002", "--fix", "--unsafe-fixes", "--no-cache", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (tmp_path / "evaluate.py").read_text() == source.replace("def evaluate", "@th.inference_mode()\ndef evaluate")


def test_ml002_a_module_level_eval_region_reports_the_function_and_the_modules_own_call(tmp_path):
    """captum's ablation tutorial: `resnet = resnet.eval()`, then `classify(img)` runs the global model
    and so does a later statement of the module: one finding for each (the function's region is
    its own, apart from the statement's)."""
    source = textwrap.dedent(
        """
        import torch
        resnet = torch.load("resnet.pt")
        resnet = resnet.eval()
        def classify(img):
            return resnet(img.unsqueeze(0)).softmax(1)
        classify(torch.load("img.pt"))
        output = resnet(torch.load("img.pt").unsqueeze(0))
        """
    )
    (tmp_path / "ablation.py").write_text(source)
    found = memlint("check", "ablation.py", "--select", "ML002", "--no-cache", "--output-format", "concise", cwd=tmp_path)
    assert "ablation.py:6:12: ML002" in found.stdout and "ablation.py:8:10: ML002" in found.stdout, found.stdout


def test_ml003_ml005_on_a_vgg_style_file(tmp_path):
    (tmp_path / "vgg.py").write_text(
        textwrap.dedent(
            """
            import torch
            from torch import nn

            class VGG(nn.Module):
                def __init__(self, features, num_classes=1000):
                    super().__init__()
                    self.features = features
                    self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
                    self.classifier = nn.Sequential(
                        nn.Linear(512 * 7 * 7, 4096),
                        nn.ReLU(),
                        nn.Linear(4096, num_classes),
                    )

                def forward(self, x):
                    x = self.avgpool(self.features(x))
                    return self.classifier(torch.flatten(x, 1))
            """
        )
    )
    result = memlint("check", "vgg.py", "--select", "ML003,ML005", "--no-cache", "--output-format", "concise", cwd=tmp_path)
    lines = sorted(result.stdout.splitlines()[:2])
    assert lines[0].startswith("vgg.py:11:13: ML005 nn.Linear(512 * 7 * 7, 4096) holds 102,760,448 weights")
    assert lines[1].startswith("vgg.py:12:13: ML003")
    memlint("check", "vgg.py", "--select", "ML003", "--fix", "--no-cache", cwd=tmp_path)
    assert "nn.ReLU(inplace=True)," in (tmp_path / "vgg.py").read_text()
