"""A name bound twice at module level (an import and a function, a class defined in two notebook
cells) is dropped from the summary as ambiguous; what its body holds must not crash the summary.
Found on the real-code corpus (issue 15): both files became internal errors (ML900)."""

import subprocess
import sys
import textwrap


def _check(tmp_path, text):
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--select", "ML001", str(path)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert "ML900" not in done.stdout, done.stdout
    assert done.returncode == 0, done.stdout + done.stderr


def test_function_named_like_an_import(tmp_path):
    _check(
        tmp_path,
        """
        import timeit
        import torch

        def timeit(runs=1):
            return runs
        """,
    )


def test_class_defined_twice(tmp_path):
    _check(
        tmp_path,
        """
        import torch
        from torch import nn

        class ViT(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(2, 2)

        class ViT(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(2, 3)
        """,
    )


def test_function_returning_a_closure_named_like_an_import(tmp_path):
    # the closure ("make_step:step") goes with the dropped function; its calls are nested code ("?")
    _check(
        tmp_path,
        """
        import torch
        from helpers import make_step

        def make_step(model, opt):
            def step(x):
                model(x).sum().backward()
                opt.step()
            return step

        step = make_step(torch.nn.Linear(2, 2), None)
        for x in range(3):
            step(x)
        """,
    )


def test_placeholder_methods_of_a_class_also_imported(tmp_path):
    # princeton-vl/RAFT: `from torch.cuda.amp import GradScaler`, else a dummy class of that name
    # whose methods only `pass` (summaries' `abstract` must pass over the dropped class)
    _check(
        tmp_path,
        """
        import torch
        try:
            from torch.cuda.amp import GradScaler
        except ImportError:
            class GradScaler:
                def __init__(self):
                    pass

                def update(self):
                    pass
        """,
    )
