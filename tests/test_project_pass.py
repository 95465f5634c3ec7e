"""The project pass (memlint/pipeline/project.py): what one file's findings learn from the other files linted
with it, through the CLI as users run it, each case with its counterpart where the facts differ."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import invoke, memlint_subprocess, write


def _findings(*args: str) -> list[tuple[str, str, int]]:
    """(file, code, row) of a `check --no-cache` run over `args` (paths and options)."""
    result = invoke("check", "--no-cache", "--output-format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return [(d["filename"], d["code"], d["location"]["row"]) for d in json.loads(result.output)]


def _messages(*args: str) -> dict[tuple[str, str], str]:
    result = invoke("check", "--no-cache", "--output-format", "json", *args)
    return {(d["filename"], d["code"]): d["message"] for d in json.loads(result.output)}


# ---------------------------------------------------------------------------- ML002


EVALUATE = """
import torch

def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
"""


def test_an_evaluate_only_called_under_no_grad_from_another_file_is_fine(project):
    write(project / "evaluation.py", EVALUATE)
    write(project / "main.py", """
        import torch
        from evaluation import evaluate

        def main(model, val_loader):
            with torch.no_grad():
                return evaluate(model, val_loader)
    """)
    assert _findings(".") == []
    # The project is the files being linted: alone, evaluation.py cannot know who calls evaluate().
    assert _findings("evaluation.py") == [("evaluation.py", "ML002", 7)]


def test_an_evaluate_that_another_file_calls_with_gradients_on_is_reported(project):
    write(project / "evaluation.py", EVALUATE)
    write(project / "main.py", """
        import torch
        from evaluation import evaluate

        def main(model, val_loader):
            with torch.no_grad():
                evaluate(model, val_loader)
            return evaluate(model, val_loader)  # once more, with gradients on
    """)
    assert _findings(".") == [("evaluation.py", "ML002", 7)]


RENDERER = """
import torch

def render(models, rays):
    def inference(model, x):
        return model(x)
    return inference(models[0], rays)
"""


def test_a_helper_a_training_step_runs_through_its_own_forward_is_training_code(project):
    # the Lightning step's `self(batch)` runs the class's forward, which renders through another
    # file's `render`: its nested `inference`, named as an evaluation, needs its gradients
    write(project / "rendering.py", RENDERER)
    write(project / "system.py", """
        import torch.nn as nn
        import pytorch_lightning as pl
        from rendering import render

        class System(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.models = nn.ModuleList([nn.Linear(3, 3)])

            def forward(self, rays):
                return render(self.models, rays)

            def training_step(self, batch, batch_idx):
                return self(batch).sum()
    """)
    assert [f for f in _findings(".") if f[1] == "ML002"] == []


def test_a_helper_a_training_step_runs_its_forward_only_under_no_grad_is_reported(project):
    write(project / "rendering.py", RENDERER)
    write(project / "system.py", """
        import torch
        import torch.nn as nn
        import pytorch_lightning as pl
        from rendering import render

        class System(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.models = nn.ModuleList([nn.Linear(3, 3)])

            def forward(self, rays):
                return render(self.models, rays)

            def training_step(self, batch, batch_idx):
                with torch.no_grad():
                    target = self(batch)
                return self.models[0](batch).sub(target).sum()
    """)
    assert [f for f in _findings(".") if f[1] == "ML002"] == [("rendering.py", "ML002", 5)]


@pytest.mark.parametrize("forward", [
    # the training branch returns first: `self(batch)` in training mode never reaches the render
    "if self.training:\n                    return self.models[0](rays)\n                return render(self.models, rays)",
    # the training call leaves `mode` at its default: the render behind `mode != "train"` does not run
    "if mode == \"train\":\n                    return self.models[0](rays)\n                return render(self.models, rays)",
])
def test_a_forward_that_picks_its_path_by_mode_or_default_is_no_training_code_of_its_step(project, forward):
    # which part of such a forward the step runs is not known: none of it is seeded, and the
    # renderer's `inference` stays an evaluation run with gradients on
    write(project / "rendering.py", RENDERER)
    write(project / "system.py", """
        import torch.nn as nn
        import pytorch_lightning as pl
        from rendering import render

        class System(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.models = nn.ModuleList([nn.Linear(3, 3)])

            def forward(self, rays, mode="train"):
                FORWARD

            def training_step(self, batch, batch_idx):
                return self(batch).sum()
    """.replace("FORWARD", forward))
    assert [f for f in _findings(".") if f[1] == "ML002"] == [("rendering.py", "ML002", 5)]


FROZEN_HELPERS = """
import torch

def run_mode(model, x, mode=0):
    if mode == 0:
        return infer(model, x)
    return infer(model, x.flip(-1)).flip(-1)

def infer(model, x):
    return model(x)
"""


def test_a_helper_every_caller_hands_a_frozen_model_or_calls_without_gradients_is_fine(project):
    # `infer` is named as an evaluation; its parameter reaches it through `run_mode` from a script
    # that froze its model first, and from a method that calls under no_grad: no run builds a graph
    write(project / "helpers.py", FROZEN_HELPERS)
    write(project / "script.py", """
        import torch
        from helpers import run_mode

        def main(net, images):
            net.eval()
            for k, v in net.named_parameters():
                v.requires_grad = False
            net = net.to("cuda")
            return [run_mode(net, x, mode=1) for x in images]
    """)
    write(project / "wrapper.py", """
        import torch
        from helpers import run_mode

        class Tester:
            def __init__(self, net):
                self.net = net

            def check(self, x):
                with torch.no_grad():
                    return run_mode(self.net, x)
    """)
    assert _findings(".") == []


def test_a_helper_one_caller_hands_a_model_with_gradients_is_reported(project):
    write(project / "helpers.py", FROZEN_HELPERS)
    write(project / "script.py", """
        import torch
        from helpers import run_mode

        def main(net, other, images):
            for p in net.parameters():
                p.requires_grad = False
            outs = [run_mode(net, x) for x in images]
            return outs + [run_mode(other, x) for x in images]  # `other` has its gradients
    """)
    assert _findings(".") == [("helpers.py", "ML002", 9)]


def test_a_helper_handed_a_model_frozen_only_after_the_call_or_thawed_is_reported(project):
    write(project / "helpers.py", FROZEN_HELPERS)
    write(project / "script.py", """
        import torch
        from helpers import run_mode

        def main(net, x):
            y = run_mode(net, x)
            for p in net.parameters():
                p.requires_grad = False
            return y

        def later(net, x):
            net.requires_grad_(False)
            y = run_mode(net, x)
            net.requires_grad_(True)
            return y
    """)
    assert _findings(".") == [("helpers.py", "ML002", 9)]


def test_a_helper_handed_a_model_a_script_froze_in_the_blocks_around_the_call_is_fine(project):
    # the freeze and the call both behind `if __name__ == "__main__":` and another `if`, the freeze
    # chained onto the mode call (`X.eval().requires_grad_(False)`), in a file that never writes
    # `requires_grad` without its underscore
    write(project / "helpers.py", FROZEN_HELPERS)
    write(project / "script.py", """
        import torch
        from helpers import run_mode

        if __name__ == "__main__":
            net = torch.load("net.pt")
            if torch.cuda.is_available():
                net.eval().requires_grad_(False).cuda()
                outs = [run_mode(net, torch.zeros(2))]
    """)
    assert _findings(".") == []


def test_a_helper_handed_a_model_frozen_behind_another_if_or_in_part_is_reported(project):
    write(project / "helpers.py", FROZEN_HELPERS)
    write(project / "script.py", """
        import torch
        from helpers import run_mode

        def main(net, x):
            for name, p in net.named_parameters():
                if not name.startswith("head."):
                    p.requires_grad = False
            return run_mode(net, x)

        if __name__ == "__main__":
            net = torch.load("net.pt")
            if torch.cuda.device_count() > 1:
                net.requires_grad_(False)
            outs = [run_mode(net, torch.zeros(2))]
    """)
    assert _findings(".") == [("helpers.py", "ML002", 9)]


def test_a_helper_handed_a_frozen_model_once_per_turn_after_counting_its_parameters_is_fine(project):
    # counting the parameters and handing the model to one call in the loop leave it frozen
    write(project / "helpers.py", FROZEN_HELPERS)
    write(project / "script.py", """
        import torch
        from helpers import run_mode

        def main(paths):
            net = torch.load("net.pt")
            net.eval()
            for _, p in net.named_parameters():
                p.requires_grad = False
            net = net.cuda()
            count = sum(map(lambda q: q.numel(), net.parameters()))
            for path in paths:
                out = run_mode(net, torch.load(path))
    """)
    assert _findings(".") == []


def test_a_helper_handed_a_model_frozen_then_changed_or_handed_on_is_reported(project):
    # after the freeze the script gives the model a new head, or a loop over its parameters that may
    # break early: either may leave parameters that ask for gradients
    write(project / "helpers.py", FROZEN_HELPERS)
    write(project / "script.py", """
        import torch
        from torch import nn
        from helpers import run_mode

        def partly(net, x):
            for p in net.parameters():
                p.requires_grad = False
                break
            return run_mode(net, x)

        if __name__ == "__main__":
            net = torch.load("net.pt")
            net.requires_grad_(False)
            net.fc = nn.Linear(4, 2)
            outs = [run_mode(net, torch.zeros(2))]
    """)
    assert _findings(".") == [("helpers.py", "ML002", 9)]


DATASETS = """
import torch

class BaseSet:
    def inference(self, model, image):
        return model(image)

    def multi_scale(self, model, image):
        return self.inference(model, image)

class FlipSet(BaseSet):
    def inference(self, model, image):
        return model(image.flip(-1))
"""

_TESTER = """
import torch

def test(dataset, model, loader):  # (handed a dataset by main.py, which imports both files)
    with torch.no_grad():
        for image in loader:
            dataset.multi_scale(model, image)
"""


def test_a_method_only_a_call_on_an_unknown_receiver_runs_under_no_grad_is_fine(project):
    # HRNet-Semantic-Segmentation: `test_dataset.multi_scale_inference(...)` (the dataset a parameter)
    # is the one call of every `multi_scale` of the project, all of one family, and it runs under
    # no_grad; `self.inference(...)` there runs `BaseSet.inference` or, for a FlipSet, its override
    write(project / "datasets.py", DATASETS)
    write(project / "tester.py", _TESTER)
    write(project / "main.py", "import datasets\nimport tester\n")
    assert _findings(".", "--select", "ML002") == []
    # with gradients on, both inferences are reported
    write(project / "tester.py", _TESTER.replace("with torch.no_grad():", "if True:"))
    assert _findings(".", "--select", "ML002") == [("datasets.py", "ML002", 5), ("datasets.py", "ML002", 12)]


def test_a_method_an_unrelated_class_shares_the_name_of_is_not_settled_by_a_call_under_no_grad(project):
    # a `multi_scale` of a class outside the family: the call may reach either, it settles neither
    write(project / "datasets.py", DATASETS + """
class Other:
    def multi_scale(self, model, image):
        return model(image)
""")
    write(project / "tester.py", _TESTER)
    write(project / "main.py", "import datasets\nimport tester\n")
    assert ("datasets.py", "ML002", 5) in _findings(".", "--select", "ML002")


_TRAINERS = """
import torch
import torch.nn as nn
from nets import Generator

class Translator(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = Generator()
        self.opt = torch.optim.Adam(self.gen.parameters())

    def sample(self, x):
        self.eval()
        out = self.gen.decode(self.gen.encode(x))
        self.train()
        return out

class Cycle(Translator):
    def sample(self, x):
        self.eval()
        out = self.gen.decode(self.gen.encode(x.flip(-1)))
        self.train()
        return out

class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = Generator()
        self.opt = torch.optim.Adam(self.gen.parameters())

    def sample(self, x):
        self.eval()
        out = self.gen.decode(self.gen.encode(x))
        self.train()
        return out
"""

_SHOW = """
import torch
from trainers import Pair, Translator

def main(kind, loader):
    if kind == "pair":
        trainer = Pair()
    else:
        trainer = Translator()
    for x in loader:
        with torch.no_grad():
            shown = trainer.sample(x)
        print(shown.mean().item())
"""


def test_a_call_under_no_grad_on_a_receiver_built_by_one_of_several_classes_settles_each(project):
    # MUNIT's train.py: `trainer = MUNIT_Trainer(config)` or `UNIT_Trainer(config)`, then
    # `trainer.sample(...)` only under no_grad: each class's `sample` (no common base) runs without
    # gradients; Cycle's override, which no construction of main.py builds, is not settled
    write(project / "trainers.py", _TRAINERS)
    write(project / "show.py", _SHOW)
    assert _findings(".", "--select", "ML002") == [("trainers.py", "ML002", 20)]
    write(project / "show.py", _SHOW.replace("with torch.no_grad():", "if True:"))
    assert _findings(".", "--select", "ML002") == [("trainers.py", "ML002", 13), ("trainers.py", "ML002", 20), ("trainers.py", "ML002", 32)]


def test_a_method_called_on_an_unknown_receiver_in_a_loader_loop_runs_per_step(project):
    # the host tensor `multi_scale` builds is built for every image of the loader, where the project's
    # classes override it (two methods of one family agree: the receiver is one of them)
    per_image = DATASETS.replace("return self.inference(model, image)", "pred = torch.zeros(1, 3).cuda()\n        return pred + self.inference(model, image)")
    overridden = per_image + "\n    def multi_scale(self, model, image):\n        return self.inference(model, image)\n"
    write(project / "datasets.py", overridden)
    write(project / "tester.py", _TESTER)
    write(project / "main.py", "import datasets\nimport tester\n")
    assert _findings(".", "--select", "ML013") == [("datasets.py", "ML013", 8)]
    # one method so named says nothing of the receiver: a third-party object's `multi_scale` may run
    write(project / "datasets.py", per_image)
    assert _findings(".", "--select", "ML013") == []
    # behind an `if`, or named like a container's method (`results.update(...)`), it is not
    write(project / "tester.py", _TESTER.replace("dataset.multi_scale(model, image)", "if image is not None:\n                dataset.multi_scale(model, image)"))
    assert _findings(".", "--select", "ML013") == []
    write(project / "datasets.py", DATASETS.replace("multi_scale", "update").replace("return self.inference(model, image)", "pred = torch.zeros(1, 3).cuda()\n        return pred + self.inference(model, image)"))
    write(project / "tester.py", _TESTER.replace("multi_scale", "update"))
    assert _findings(".", "--select", "ML013") == []


LEARNER = """
import torch
from torch import nn

class Learner(nn.Module):
    def __init__(self, mode="meta"):
        super().__init__()
        self.base = nn.Linear(4, 2)
        self.mode = mode

    def forward(self, inp):
        if self.mode == "pre":
            return self.base(inp)
        return self.meta_forward(*inp)

    def meta_forward(self, shot, label, query):
        loss = ((self.base(shot) - label) ** 2).mean()
        grads = torch.autograd.grad(loss, self.base.parameters())
        return query
"""


@pytest.mark.parametrize("adapts", [True, False])
def test_a_model_whose_forward_in_another_file_computes_gradients_needs_them(project, adapts):
    # meta-transfer-learning: the trainer's validation runs a learner whose forward adapts its base
    # learner with torch.autograd.grad (models/mtl.py); no_grad there would raise
    write(project / "models" / "mtl.py", LEARNER if adapts else LEARNER.replace("grads = torch.autograd.grad(loss, self.base.parameters())", "grads = None"))
    write(project / "trainer.py", """
        import torch
        from models.mtl import Learner

        class Trainer:
            def __init__(self):
                self.model = Learner()
                if torch.cuda.is_available():
                    self.model = self.model.cuda()

            def validate(self, loader):
                self.model.eval()
                for shot, label, query in loader:
                    logits = self.model((shot, label, query))
                    print(logits.sum().item())
    """)
    assert [f for f in _findings(".") if f[1] == "ML002"] == ([] if adapts else [("trainer.py", "ML002", 13)])


@pytest.mark.parametrize("runs_encoder", [True, False])
def test_a_model_method_that_another_files_modules_run_the_model_in(project, runs_encoder):
    # protonets: utils/model.py never names torch; `model.loss(sample)` runs Protonet's encoder
    write(project / "protonets" / "__init__.py", "")
    write(project / "protonets" / "models.py", """
        import torch
        from torch import nn

        class Protonet(nn.Module):
            def __init__(self, encoder):
                super().__init__()
                self.encoder = encoder

            def loss(self, sample):
                z = self.encoder.forward(sample["xs"])
                return z.mean(), {"acc": z.mean().item()}
    """ if runs_encoder else """
        import torch
        from torch import nn

        class Protonet(nn.Module):
            def loss(self, sample):
                return 0.0, {"acc": 1.0}
    """)
    write(project / "protonets" / "utils.py", """
        from protonets.models import Protonet

        def evaluate(model, data_loader, meters):
            model.eval()
            for sample in data_loader:
                _, output = model.loss(sample)
                for field, meter in meters.items():
                    meter.add(output[field])
            return meters
    """)
    found = [f for f in _findings(".") if f[1] == "ML002"]
    assert found == ([("protonets/utils.py", "ML002", 6)] if runs_encoder else [])


EVAL_MODE = """
class eval_mode(object):
    def __init__(self, *models):
        self.models = models

    def __enter__(self):
        self.prev_states = []
        for model in self.models:
            self.prev_states.append(model.training)
            model.train(False)

    def __exit__(self, *args):
        for model, state in zip(self.models, self.prev_states):
            model.train(state)
        return False
"""


_PARTLY_NO_GRAD = ("with torch.no_grad():\n                    mu = self.actor(torch.as_tensor(obs))\n"
                   "                return self.actor.sample(torch.as_tensor(obs)).detach().numpy()")


@pytest.mark.parametrize("own_no_grad", [False, True, "partly"])
def test_a_context_manager_of_another_file_that_puts_the_agent_in_eval_mode(project, own_no_grad):
    # pytorch_sac's `with utils.eval_mode(agent): agent.act(obs)`; curl's agent runs its actor
    # under its own no_grad (CurlSacAgent.sample_action): no graph, no finding.  "partly": a run of
    # `self.actor.sample(...)` after the no_grad block has gradients on (summaries' `model_grad`)
    write(project / "utils.py", EVAL_MODE)
    body = "with torch.no_grad():\n                    return self.actor(torch.as_tensor(obs)).numpy()" if own_no_grad is True else "return self.actor(torch.as_tensor(obs)).detach().numpy()"
    if own_no_grad == "partly":
        body = _PARTLY_NO_GRAD
    write(project / "agent.py", f"""
        import torch
        from torch import nn

        class Agent:
            def __init__(self):
                self.actor = nn.Linear(4, 2)

            def train(self, training=True):
                self.actor.train(training)

            def sample_action(self, obs):
                {body}
    """)
    write(project / "train.py", """
        import utils
        from agent import Agent

        def run(env, steps):
            agent = Agent()
            obs = env.reset()
            for step in range(steps):
                with utils.eval_mode(agent):
                    action = agent.sample_action(obs)
                obs, reward, done, _ = env.step(action)
    """)
    found = [f for f in _findings(".") if f[1] == "ML002"]
    assert found == ([] if own_no_grad is True else [("train.py", "ML002", 9)])


def test_a_method_a_project_decorator_runs_without_gradients_is_grad_free(project):
    # `@no_grad_method def sample_action(...)`, the decorator another file's (ProjectPass.base_grad)
    write(project / "utils.py", "import torch\n" + EVAL_MODE + """

def no_grad_method(fn):
    def wrapper(*args, **kwargs):
        with torch.no_grad():
            return fn(*args, **kwargs)
    return wrapper
""")
    write(project / "agent.py", """
        import torch
        from torch import nn
        from utils import no_grad_method

        class Agent:
            def __init__(self):
                self.actor = nn.Linear(4, 2)

            def train(self, training=True):
                self.actor.train(training)

            @no_grad_method
            def sample_action(self, obs):
                return self.actor(torch.as_tensor(obs)).numpy()
    """)
    write(project / "train.py", """
        import utils
        from agent import Agent

        def run(env, steps):
            agent = Agent()
            obs = env.reset()
            for step in range(steps):
                with utils.eval_mode(agent):
                    action = agent.sample_action(obs)
                obs, reward, done, _ = env.step(action)
    """)
    assert [f for f in _findings(".") if f[1] == "ML002"] == []


def test_a_caller_that_is_itself_only_called_under_no_grad_counts_transitively(project):
    write(project / "pkg" / "__init__.py", "")
    write(project / "pkg" / "evaluation.py", EVALUATE)
    write(project / "pkg" / "loop.py", """
        from .evaluation import evaluate

        def validate_all(model, loaders):
            return [evaluate(model, loader) for loader in loaders]
    """)
    write(project / "run.py", """
        import torch
        from pkg.loop import validate_all

        with torch.inference_mode():
            validate_all(net, loaders)
    """)
    assert _findings(".") == []
    write(project / "run.py", """
        import torch
        from pkg.loop import validate_all

        validate_all(net, loaders)
    """)
    assert ("pkg/evaluation.py", "ML002", 7) in _findings(".")


PREDICT = """
import torch

def predict(model, x):
    return model(x).softmax(-1)
"""


@pytest.mark.parametrize("caller", [
    """
    import torch
    from infer import predict

    def train(model, loader, optimizer):
        for x, y in loader:
            probs = predict(model, x)
            loss = torch.nn.functional.nll_loss(probs.log(), y)
            loss.backward()
            optimizer.step()
    """,
    """
    import lightning as L
    from infer import predict

    class Lit(L.LightningModule):
        def training_step(self, batch, batch_idx):
            x, y = batch
            return predict(self, x).log().mean()
    """,
], ids=["training-loop", "lightning-training-step"])
def test_a_predict_that_a_training_step_calls_gets_no_no_grad_fix(project, caller):
    infer = write(project / "infer.py", PREDICT)
    write(project / "train.py", caller)
    assert _findings(".") == []
    result = invoke("check", "--no-cache", "--fix", "--unsafe-fixes", ".")
    assert result.exit_code == 0, result.output
    assert "no_grad" not in infer.read_text()
    # Without the training code, predict() is evaluation like any other, and gets its fix.
    assert _findings("infer.py") == [("infer.py", "ML002", 4)]
    invoke("check", "--no-cache", "--fix", "--unsafe-fixes", "infer.py")
    assert "@torch.no_grad()" in infer.read_text()


def test_a_predict_called_outside_training_is_still_reported(project):
    write(project / "infer.py", PREDICT)
    write(project / "serve.py", """
        from infer import predict

        def handle(model, request):
            return predict(model, request.tensor).tolist()
    """)
    assert _findings(".") == [("infer.py", "ML002", 4)]


GAN_CLASS = """
import torch

class {name}:
    def train(self, loader):
        for epoch in range(10):
            with torch.no_grad():
                self.visualize_results(epoch)

    def visualize_results(self, epoch):
        self.G.eval()
        return self.G(self.z).cpu()
"""


def test_a_method_called_through_a_receiver_of_several_classes_counts_for_each(project):
    """pytorch-generative-model-collections (issue 27): each class samples under no_grad itself, and
    main.py calls `gan.visualize_results()` once more with gradients on, `gan` any of the classes."""
    write(project / "gan.py", GAN_CLASS.format(name="GAN"))
    write(project / "wgan.py", GAN_CLASS.format(name="WGAN"))
    main = """
        from gan import GAN
        from wgan import WGAN

        def main(kind, loader):
            if kind == "GAN":
                gan = GAN()
            else:
                gan = WGAN()
            gan.train(loader)
            {call}
    """
    write(project / "main.py", main.format(call="gan.visualize_results(10)"))
    assert _findings(".") == [("gan.py", "ML002", 11), ("wgan.py", "ML002", 11)]
    write(project / "main.py", main.format(call="print(gan)"))
    assert _findings(".") == []
    # A receiver of unknown class in a training loop: were it either class, the method would be
    # training code's, which the rule leaves alone too.
    write(project / "main.py", main.format(call="for x in loader: make(x).visualize_results(1); loss(x).backward()"))
    assert _findings(".") == []


PERTURBER = """
import torch
from torch import nn

class Perturber(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x, y, steps=3):
        def ascend(x):
            x = x.detach().requires_grad_(True)
            loss = nn.functional.cross_entropy(self.net(x), y)
            grad, = torch.autograd.grad(loss, [x])
            return x + 0.01 * grad.sign()
        for _ in range(steps):
            x = ascend(x)
        return x

class Robust(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.perturber = Perturber(net)

    def forward(self, x, y=None, perturb=False):
        if perturb:
            x = self.perturber(x, y)
        return self.net(x), x
"""

BUILDER = """
import torch
from torch import nn
from robust.wrappers import Robust

def build(net, parallel=False):
    model = Robust(net)
    if parallel:
        model = nn.DataParallel(model)
    model = model.cuda()
    return model, {"epoch": 0}
"""


def _cell(source: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": textwrap.dedent(source).lstrip("\n").splitlines(keepends=True)}  # fmt: skip


@pytest.mark.parametrize("perturbs", [True, False])
def test_a_notebook_model_whose_submodule_takes_gradients_behind_a_flag(project, perturbs):
    # robustness: `model, _ = make_and_restore_model(...)` builds an AttackerModel whose forward runs
    # its PGD attacker (`torch.autograd.grad` in a function nested in the attacker's forward) only
    # `if make_adv:`; a notebook cell that turns it on attacks, one that does not evaluates
    write(project / "robust" / "__init__.py", "")
    write(project / "robust" / "wrappers.py", PERTURBER)
    write(project / "robust" / "builder.py", BUILDER)
    cells = [
        "import torch\nfrom robust.builder import build\nmodel, _ = build(torch.nn.Linear(4, 2))\nmodel.eval()\n",
        "x, y = torch.randn(8, 4), torch.zeros(8, dtype=torch.long)\n",
        "_, x_adv = model(x, y, perturb=True)\n" if perturbs else "_, x_adv = model(x, y)\n",
        "logits, _ = model(x_adv)\nprint(logits.argmax(1))\n",
    ]
    notebook = {"cells": [_cell(c) for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (project / "attack.ipynb").write_text(json.dumps(notebook, indent=1) + "\n")
    result = invoke("check", "--no-cache", "--output-format", "json", "--select", "ML002", ".")
    found = sorted((d["filename"], d["cell"], d["location"]["row"]) for d in json.loads(result.output))
    # (without the flag the attack cell is plain inference: it and the next cell are reported)
    assert found == ([("attack.ipynb", 4, 1)] if perturbs else [("attack.ipynb", 3, 1), ("attack.ipynb", 4, 1)])


@pytest.mark.parametrize("backward", [True, False])
def test_a_notebook_cell_whose_forward_a_later_cell_differentiates(project, backward):
    # a saliency map: the forward in one cell, its backward in the next; the forward needs its
    # graph, while a forward after the gradient cell is evaluation again
    cells = [
        "import torch\nmodel = torch.nn.Linear(4, 2)\nmodel.eval()\nx = torch.randn(1, 4, requires_grad=True)\n",
        "scores = model(x)\n",
        "scores[0, 1].backward()\n" if backward else "print(scores)\n",
        "print(model(x).argmax(1))\n",
    ]
    notebook = {"cells": [_cell(c) for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (project / "saliency.ipynb").write_text(json.dumps(notebook, indent=1) + "\n")
    result = invoke("check", "--no-cache", "--output-format", "json", "--select", "ML002", ".")
    found = sorted((d["filename"], d["cell"], d["location"]["row"]) for d in json.loads(result.output))
    assert found == ([("saliency.ipynb", 4, 1)] if backward else [("saliency.ipynb", 2, 1), ("saliency.ipynb", 4, 1)])


@pytest.mark.parametrize("nested", [True, False])
def test_a_forward_whose_submodule_takes_gradients_in_a_nested_function(project, nested):
    # robustness's AttackerModel: `self.eval()`, then `self.attacker(...)`, whose forward runs the
    # PGD steps in a nested function calling torch.autograd.grad: gradients are the point
    source = PERTURBER.replace("if perturb:", "if perturb:\n            self.eval()")
    if not nested:
        source = source.replace("grad, = torch.autograd.grad(loss, [x])", "grad = loss")
    write(project / "wrappers.py", source)
    assert [f for f in _findings(".", "--select", "ML002")] == ([] if nested else [("wrappers.py", "ML002", 28)])


# ---------------------------------------------------------------------------- ML009


HELPERS = """
import torch

def free_memory():
    torch.cuda.empty_cache()
"""


def test_a_flush_reached_every_step_through_a_helper_in_another_file(project):
    write(project / "helpers.py", HELPERS)
    write(project / "train.py", """
        from helpers import free_memory

        def fit(model, train_loader, optimizer):
            for x, y in train_loader:
                model(x).sum().backward()
                optimizer.step()
                free_memory()
    """)
    assert _findings(".") == [("helpers.py", "ML009", 4)]
    message = _messages(".")[("helpers.py", "ML009")]
    assert "for x, y in train_loader" in message and "train.py" in message and "free_memory()" in message


def test_a_flush_in_a_walk_over_a_dataset_whose_items_an_inherited_method_of_another_file_runs(project):
    """The loop's scope takes the project pass's word that `self.test()` (SRModel's, in another file)
    runs the network: each iteration walks one item of the dataset, a per-sample step."""
    write(project / "sr_model.py", """
        import torch

        class SRModel:
            def test(self):
                with torch.no_grad():
                    self.output = self.net_g(self.lq)
    """)
    write(project / "video_model.py", """
        import torch
        from sr_model import SRModel

        class VideoModel(SRModel):
            def validation(self, dataset, rank, world_size):
                for idx in range(rank, len(dataset), world_size):
                    self.lq = dataset[idx]["lq"]
                    self.test()
                    torch.cuda.empty_cache()

            def cache(self, dataset):
                for idx in range(len(dataset)):
                    self.lq = dataset[idx]["lq"]
                    self.save()
                    torch.cuda.empty_cache()
    """)
    assert _findings(".") == [("video_model.py", "ML009", 9)]


def test_a_flush_reached_through_two_helpers_in_three_files(project):
    write(project / "helpers.py", HELPERS)
    write(project / "steps.py", """
        import helpers

        def after_step(model):
            model.zero_grad()
            helpers.free_memory()
    """)
    write(project / "train.py", """
        from steps import after_step

        for batch in train_loader:
            loss = model(batch).mean()
            loss.backward()
            after_step(model)
    """)
    assert _findings(".") == [("helpers.py", "ML009", 4)]


def test_a_flush_reached_only_now_and_then_is_fine(project):
    write(project / "helpers.py", HELPERS)
    write(project / "train.py", """
        from helpers import free_memory

        for step, batch in enumerate(train_loader):
            model(batch).mean().backward()
            if step % 100 == 0:
                free_memory()
        free_memory()
    """)
    assert _findings(".") == []


def test_a_flush_once_per_epoch_through_a_helper_in_another_file_is_fine(project):
    # the epoch loop hands the loader to a per-epoch function whose name looks like a model's
    write(project / "helpers.py", HELPERS)
    write(project / "train.py", """
        from helpers import free_memory

        for epoch in range(epochs):
            train_encoder(train_loader, model, optimizer)
            free_memory()
    """)
    assert _findings(".") == []


def test_a_flush_in_a_helper_of_a_lightning_hook(project):
    write(project / "helpers.py", HELPERS)
    write(project / "model.py", """
        import lightning as L
        from helpers import free_memory

        class Lit(L.LightningModule):
            def on_train_batch_end(self, outputs, batch, batch_idx):
                free_memory()
    """)
    found = _messages(".")
    assert list(found) == [("helpers.py", "ML009")]
    assert "on_train_batch_end" in found[("helpers.py", "ML009")]


# ---------------------------------------------------------------------------- ML001 and classes


LOSSES = """
import torch.nn.functional as F

def compute_loss(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits, y)
"""


def test_a_helper_in_another_file_that_returns_a_loss_carries_history(project):
    write(project / "pkg" / "__init__.py", "")
    write(project / "pkg" / "losses.py", LOSSES)
    write(project / "pkg" / "train.py", """
        import torch
        from .losses import compute_loss

        def report(model, loader):
            total = 0.0
            for x, y in loader:
                total += compute_loss(model, x, y)
            return total
    """)
    assert _findings(".") == [("pkg/train.py", "ML001", 7)]
    assert _findings("pkg/train.py") == []  # alone, train.py cannot see what compute_loss returns


def test_a_helper_that_returns_a_number_carries_none(project):
    write(project / "losses.py", LOSSES.replace("return F.cross_entropy(logits, y)", "return F.cross_entropy(logits, y).item()"))
    write(project / "train.py", """
        import torch
        import losses

        total = 0.0
        for x, y in loader:
            total += losses.compute_loss(model, x, y)
    """)
    assert _findings(".") == []


def test_a_helper_whose_loss_is_of_detached_values_carries_none(project):
    # a loss computes from its arguments alone: of detached CPU copies, it has no history, for the
    # project pass's summary as for the semantic model (values.graph_free_arguments, issue 27)
    write(project / "losses.py", """
        import torch.nn.functional as F

        def validation_loss(model, x, y):
            pred = model(x)
            return F.mse_loss(pred.detach().cpu(), y.detach().cpu())
    """)
    write(project / "train.py", """
        import torch
        from losses import validation_loss

        def report(model, loader):
            total = 0.0
            for x, y in loader:
                total += validation_loss(model, x, y)
            return total
    """)
    assert _findings(".", "--select", "ML001") == []


def test_a_helper_whose_model_is_known_by_its_methods_carries_history(project):
    # `G` is named like no model; `G.train()` and `G(z)` make it one (evidence.module_names), for the
    # project pass's summary as for the semantic model (call_rules, issue 27)
    write(project / "losses.py", """
        def generator_loss(G, z):
            G.train()
            return G(z).mean()
    """)
    write(project / "train.py", """
        import torch
        from losses import generator_loss

        def report(G, noise):
            total = 0.0
            for z in noise:
                total += generator_loss(G, z)
            return total
    """)
    assert _findings(".") == [("train.py", "ML001", 7)]


def test_a_helper_that_returns_indices_carries_none(project):
    # `torch.argmax` returns indices, never history: the summary reads the rule values.py reads
    # (call_rules.torch_call), and no longer the history of its arguments
    write(project / "predict.py", """
        import torch

        def predict(model, x):
            return torch.argmax(model(x), dim=1)
    """)
    write(project / "train.py", """
        import torch
        from predict import predict

        def count(model, loader):
            total = 0
            for x, y in loader:
                total += predict(model, x)
            return total
    """)
    assert [f for f in _findings(".") if f[1] == "ML001"] == []


# issue 27: the loss function of a sibling file returns `(loss, mse, ce)` computed by hand, which the
# summary cannot see carry history; the script's own `loss.backward()` proves that it does.
HAND_WRITTEN_LOSS = """
def objective(pred, target):
    mse = ((pred - target) ** 2).mean()
    l1 = (pred - target).abs().mean()
    return mse + l1, mse, l1
"""


def test_backward_in_the_loop_beats_a_summary_that_sees_no_history(project):
    write(project / "losses.py", HAND_WRITTEN_LOSS)
    write(project / "train.py", """
        import torch
        from losses import objective

        def train(net, loader, optimizer):
            running_loss, running_mse = 0.0, 0.0
            for x, y in loader:
                optimizer.zero_grad()
                loss, mse, l1 = objective(net(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                running_loss += loss
                running_mse += mse.item()
            return running_loss, running_mse
    """)
    assert _findings(".") == [("train.py", "ML001", 11)]
    assert _findings("train.py") == [("train.py", "ML001", 11)]  # the evidence is in the file itself


def test_a_step_helper_in_another_file_returns_the_loss_it_backpropagated(project):
    # the summary reads the same evidence (memlint/analysis/evidence.py): `loss.backward()` in
    # `train_step` proves that the `loss` it returns carries history
    write(project / "losses.py", HAND_WRITTEN_LOSS)
    write(project / "steps.py", """
        from losses import objective

        def train_step(net, x, y, optimizer):
            optimizer.zero_grad()
            loss, mse, l1 = objective(net(x), y)
            loss.backward()
            optimizer.step()
            return loss
    """)
    write(project / "train.py", """
        import torch
        from steps import train_step

        def fit(net, loader, optimizer):
            total = 0.0
            for x, y in loader:
                total += train_step(net, x, y, optimizer)
            return total
    """)
    assert _findings(".") == [("train.py", "ML001", 7)]


def test_backward_on_a_number_proves_nothing(project):
    write(project / "losses.py", HAND_WRITTEN_LOSS)
    write(project / "train.py", """
        import torch
        from losses import objective

        def train(net, loader, optimizer):
            running_loss = 0.0
            for x, y in loader:
                loss, mse, l1 = objective(net(x.cuda()), y.cuda())
                loss.backward()
                loss = loss.item()
                running_loss += loss
            return running_loss
    """)
    assert _findings(".") == []


BASE = """
from torch import nn

class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)
"""


def test_self_in_a_class_whose_module_base_is_in_another_file(project):
    write(project / "base.py", BASE)
    write(project / "net.py", """
        import torch
        from base import Base

        class Net(Base):
            def score(self, loader):
                self.eval()
                total = 0
                for x in loader:
                    total += self(x).sum()
                return total
    """)
    found = _findings(".")
    assert ("net.py", "ML002", 9) in found and ("net.py", "ML001", 9) in found
    # Without base.py, Base could be anything: `self(x)` is not known to run a model.
    assert _findings("net.py") == []


def test_a_base_that_is_no_module_makes_none(project):
    write(project / "base.py", "class Base:\n    def __call__(self, x):\n        return x\n")
    write(project / "net.py", """
        import torch
        from base import Base

        class Net(Base):
            def score(self, loader):
                self.eval()
                total = 0
                for x in loader:
                    total += self(x).sum()
                return total
    """)
    assert _findings(".") == []


# ---------------------------------------------------------------------------- the cache


# ---------------------------------------------------------------------------- ML003

SPECTRAL = """
from torch import nn

class SpectralNorm(nn.Module):
    def __init__(self, module, name="weight"):
        super().__init__()
        self.module = module
        self.name = name
        self.module.register_parameter(name + "_bar", nn.Parameter(getattr(module, name).data))

    def forward(self, *args):
        return self.module.forward(*args)
"""


def test_a_wrapper_class_of_another_file_outputs_what_its_module_outputs(project):
    """SAGAN's `SpectralNorm(nn.Conv2d(...))` from spectral.py: the LeakyReLU after it overwrites a
    convolution's fresh output (exact selection: nothing after it keeps its input)."""
    write(project / "spectral.py", SPECTRAL)
    write(project / "models.py", """
        from torch import nn
        from spectral import SpectralNorm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                layers = []
                layers.append(SpectralNorm(nn.Conv2d(3, 8, 4, 2, 1)))
                layers.append(nn.LeakyReLU(0.1))
                self.l1 = nn.Sequential(*layers)

            def forward(self, x):
                return self.l1(x)
    """)
    assert ("models.py", "ML003", 9) in _findings("--select", "ML003", ".")
    # Without spectral.py, SpectralNorm could return anything (its input, a kept tensor).
    assert _findings("--select", "ML003", "models.py") == []


def test_a_helper_of_another_file_returning_batch_norm_returns_a_fresh_tensor(project):
    """attention-transfer's `utils.batch_norm(...)`, returning `F.batch_norm(...)`: its result is a
    new tensor nothing keeps for backward, so the ReLU on it may run in place (summaries' `unsaved`)."""
    write(project / "helpers.py", """
        import torch.nn.functional as F

        def normalise(x, params, training):
            return F.batch_norm(x, params["mean"], params["var"], training=training)
    """)
    write(project / "model.py", """
        import torch.nn.functional as F
        import helpers

        def head(x, params):
            return F.relu(helpers.normalise(x, params, True))
    """)
    assert ("model.py", "ML003", 5) in _findings("--select", "ML003", ".")
    assert _findings("--select", "ML003", "model.py") == []  # alone, the helper may return anything


def test_a_helper_that_returns_its_input_in_one_branch_is_no_fresh_tensor(project):
    write(project / "helpers.py", """
        import torch.nn.functional as F

        def normalise(x, params, training):
            if params is None:
                return x
            return F.batch_norm(x, params["mean"], params["var"], training=training)
    """)
    write(project / "model.py", """
        import torch.nn.functional as F
        import helpers

        def head(x, params):
            return F.relu(helpers.normalise(x, params, True))
    """)
    assert _findings("--select", "ML003", ".") == []


@pytest.mark.parametrize(
    "helper",
    [
        # a cache hands every caller the same tensor
        "import functools\nimport torch.nn.functional as F\n\n@functools.lru_cache(maxsize=None)\ndef normalise(x):\n    return F.batch_norm(x, None, None, training=True)\n",
        # the name is bound again, to a wrapper
        "import functools\nimport torch.nn.functional as F\n\ndef normalise(x):\n    return F.batch_norm(x, None, None, training=True)\n\nnormalise = functools.lru_cache(maxsize=None)(normalise)\n",
        # `**kw` may carry the caller's `out=` buffer
        "import torch\n\ndef normalise(x, **kw):\n    return torch.cat([x, x], **kw)\n",
    ],
)
def test_a_helper_that_may_return_a_kept_tensor_is_not_unsaved(project, helper):
    (project / "helpers.py").write_text(helper)
    write(project / "model.py", """
        import torch.nn.functional as F
        from helpers import normalise

        def head(x):
            return F.relu(normalise(x))
    """)
    assert _findings("--select", "ML003", ".") == []


def test_module_level_code_of_a_module_another_file_imports_is_not_read(project):
    """`from data import scores` reads the module's global after the script's last line: an
    activation in place on it would change what the importer sees (FileView.unimported)."""
    script = """
        import torch
        import torch.nn.functional as F
        x = torch.randn(4, 3)
        w = torch.randn(3, 3)
        scores = x @ w
        probs = F.relu(scores)
    """
    write(project / "data.py", script)
    assert ("data.py", "ML003", 6) in _findings("--select", "ML003", ".")  # a script nobody imports
    write(project / "use.py", """
        from data import scores
        print(scores.min())
    """)
    assert _findings("--select", "ML003", ".") == []


def test_a_wrapper_class_that_hooks_its_module_is_no_plain_wrapper(project):
    write(project / "spectral.py", SPECTRAL.replace("self.module.register_parameter(name + \"_bar\", nn.Parameter(getattr(module, name).data))", "self.module.register_forward_hook(lambda m, i, o: None)"))
    write(project / "models.py", """
        from torch import nn
        from spectral import SpectralNorm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.l1 = nn.Sequential(SpectralNorm(nn.Conv2d(3, 8, 4, 2, 1)), nn.LeakyReLU(0.1))

            def forward(self, x):
                return self.l1(x)
    """)
    assert _findings("--select", "ML003", ".") == []


def _plant(project: Path, filename: str, message: str) -> None:
    """Rewrite the cached findings of `filename` so that a hit shows in the output."""
    for entry in sorted((project / ".memlint_cache").glob("v1/*/*.json")):
        data = json.loads(entry.read_text())
        for item in data.get("diagnostics", ()):
            if item["filename"] == filename:
                item["message"] = message
                entry.write_text(json.dumps(data))
                return
    raise AssertionError(f"no cached findings for {filename}")


def _cached_run() -> list[tuple[str, str, str]]:
    result = invoke("check", "--output-format", "json", ".")
    return [(d["filename"], d["code"], d["message"]) for d in json.loads(result.output)]


def test_a_changed_helper_rechecks_its_callers_and_nothing_else(project):
    losses = write(project / "losses.py", LOSSES)
    write(project / "train.py", """
        import torch
        from losses import compute_loss

        total = 0.0
        for x, y in loader:
            total += compute_loss(model, x, y)
    """)
    write(project / "other.py", EVALUATE)  # depends on nothing the helper file says
    first = _cached_run()
    assert [(f, c) for f, c, _ in first] == [("other.py", "ML002"), ("train.py", "ML001")]

    # The helper now returns a number: train.py is checked again and its finding goes away;
    # other.py is answered from the cache (its planted message survives).
    _plant(project, "other.py", "served from the cache")
    losses.write_text(losses.read_text().replace("return F.cross_entropy(logits, y)", "return F.cross_entropy(logits, y).item()"))
    assert _cached_run() == [("other.py", "ML002", "served from the cache")]

    # And back: the finding returns.
    losses.write_text(losses.read_text().replace(".item()", ""))
    assert [(f, c) for f, c, _ in _cached_run()] == [("other.py", "ML002"), ("train.py", "ML001")]

    # A change to the helper's file that changes no fact train.py depends on re-checks only it.
    _plant(project, "train.py", "served from the cache too")
    losses.write_text(losses.read_text() + "\n# a comment\n")
    assert ("train.py", "ML001", "served from the cache too") in _cached_run()


def test_the_same_findings_with_and_without_the_cache_and_with_workers(project):
    write(project / "helpers.py", HELPERS)
    write(project / "losses.py", LOSSES)
    write(project / "evaluation.py", EVALUATE)
    for index in range(10):  # enough files for worker processes
        write(project / f"train_{index}.py", f"""
            import torch
            from helpers import free_memory
            from losses import compute_loss
            from evaluation import evaluate

            def fit_{index}(model, loader, optimizer, val_loader):
                total = 0.0
                for x, y in loader:
                    loss = compute_loss(model, x, y)
                    loss.backward()
                    optimizer.step()
                    total += loss
                    free_memory()
                with torch.no_grad():
                    return evaluate(model, val_loader), total
        """)
    expected = invoke("check", "--no-cache", "--jobs", "1", "--output-format", "json", ".").output
    findings = json.loads(expected)
    assert {(d["filename"], d["code"]) for d in findings} == {("helpers.py", "ML009")} | {
        (f"train_{i}.py", "ML001") for i in range(10)
    }
    for args in (["--jobs", "2"], ["--jobs", "2"], ["--jobs", "1"]):  # fills, then serves the cache
        assert invoke("check", *args, "--output-format", "json", ".").output == expected


def test_standard_input_is_a_project_of_its_own(project):
    source = LOSSES + """
total = 0.0
for x, y in loader:
    total += compute_loss(model, x, y)
"""
    result = memlint_subprocess("check", "--output-format", "json", "--stdin-filename", "t.py", "-", cwd=project, input=source)
    assert [(d["code"], d["location"]["row"]) for d in json.loads(result.stdout)] == [("ML001", 10)]


# ---------------------------------------------------------------------------- project-context


def test_project_context_lets_unlinted_files_inform_the_findings(project):
    """A pre-commit hook lints the changed files only; with project-context the other files of
    the project still tell who calls what, so the answer is the full run's."""
    write(project / "evaluation.py", EVALUATE)
    write(project / "losses.py", LOSSES)
    write(project / "main.py", """
        import torch
        from evaluation import evaluate
        from losses import compute_loss

        def main(model, loader, val_loader):
            total = 0.0
            for x, y in loader:
                total += compute_loss(model, x, y)
            with torch.no_grad():
                return evaluate(model, val_loader), total
    """)
    full = _findings(".")
    assert full == [("main.py", "ML001", 8)]
    assert _findings("evaluation.py") == [("evaluation.py", "ML002", 7)]  # main.py unseen
    assert _findings("main.py") == []  # losses.py unseen
    assert _findings("--project-context", "evaluation.py") == []
    assert _findings("--project-context", "main.py") == [("main.py", "ML001", 8)]
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n[tool.memlint]\nproject-context = true\n")
    assert _findings("evaluation.py") == []
    assert _findings("--no-project-context", "evaluation.py") == [("evaluation.py", "ML002", 7)]
    # With the cache: the context files' summaries are cached too, and give the same answer.
    assert [d[:2] for d in _cached_run_of("main.py")] == [("main.py", "ML001")]
    assert [d[:2] for d in _cached_run_of("main.py")] == [("main.py", "ML001")]


def _cached_run_of(*paths: str) -> list[tuple[str, str, str]]:
    result = invoke("check", "--output-format", "json", *paths)
    return [(d["filename"], d["code"], d["message"]) for d in json.loads(result.output)]


# ---------------------------------------------------------------------------- ML017


PPO_AGENT = """
import torch
from torch import nn


class Agent:
    def __init__(self):
        self.actor = nn.Linear(4, 2)
        self.optimizer = torch.optim.Adam(self.actor.parameters())

    def update(self, batches):
        for s, a in batches:
            loss = -self.actor(s).gather(1, a).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
"""


def test_a_library_module_of_a_cpu_only_project_is_no_mixed_precision_site(project):
    # Lizhi-sjtu/DRL-code-pytorch: neither the agent nor the script that imports it names a device.
    write(project / "agent.py", PPO_AGENT)
    write(project / "main.py", """
        from agent import Agent

        agent = Agent()
        agent.update(batches)
    """)
    assert _findings(".", "--select", "ML017") == []
    # Alone, the module's caller is unknown: it may choose the device.
    assert _findings("agent.py", "--select", "ML017") == [("agent.py", "ML017", 11)]


TD3_AGENT = """
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class TD3:
    def __init__(self):
        self.actor = nn.Linear(4, 2).to(device)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters())

    def train(self, buffer):
        s, a = buffer.sample()
        loss = (self.actor(s) - a).pow(2).mean()
        self.actor_optimizer.zero_grad()
        loss.backward()
        self.actor_optimizer.step()
"""

TD3_MAIN = """
import torch
import TD3
import DDPG

torch.manual_seed(0)

if args.policy == "TD3":
    policy = TD3.TD3()
else:
    policy = DDPG.DDPG()
for t in range(1000):
    policy.train(replay_buffer)
"""


def test_a_script_whose_step_is_a_method_of_an_accelerator_class_of_another_file_is_reported(project):
    # sfujim/TD3: main.py names no device; `policy.train(buffer)` of TD3.py / DDPG.py (each puts its
    # networks on cuda) runs the model, backpropagates and steps on every call.
    write(project / "TD3.py", TD3_AGENT)
    write(project / "DDPG.py", TD3_AGENT.replace("class TD3", "class DDPG"))
    write(project / "main.py", TD3_MAIN)
    assert _findings(".", "--select", "ML017") == [("main.py", "ML017", 11)]


def test_a_script_whose_step_is_a_method_of_a_cpu_only_class_stays_silent(project):
    cpu_agent = TD3_AGENT.replace('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n', "").replace(".to(device)", "")
    write(project / "TD3.py", cpu_agent)
    write(project / "DDPG.py", cpu_agent.replace("class TD3", "class DDPG"))
    write(project / "main.py", TD3_MAIN)
    assert _findings(".", "--select", "ML017") == []


def test_a_method_only_one_of_the_receivers_classes_trains_with_is_no_training_step(project):
    write(project / "TD3.py", TD3_AGENT)
    write(project / "DDPG.py", "class DDPG:\n    def train(self, buffer):\n        return buffer\n")
    write(project / "main.py", TD3_MAIN)
    assert _findings(".", "--select", "ML017") == []


def test_a_step_on_an_agent_a_factory_of_another_file_builds_is_reported(project):
    # MishaLaskin/curl: `agent = make_agent(...)`, whose every return builds an agent of another file
    write(project / "TD3.py", TD3_AGENT)
    write(project / "factory.py", """
        import TD3

        def make_agent(args):
            if args.agent == "td3":
                return TD3.TD3()
            raise ValueError(args.agent)
    """)
    write(project / "main.py", """
        from factory import make_agent

        def main(args, buffer):
            agent = make_agent(args)
            for t in range(1000):
                agent.train(buffer)
    """)
    assert _findings(".", "--select", "ML017") == [("main.py", "ML017", 5)]


def test_a_step_on_a_model_a_factory_binds_by_branch_and_returns_is_reported(project):
    # ozan-oktay/Attention-Gated-Networks: `get_model` binds `model = None`, then the class of the
    # branch (imported in that branch), and returns `model`; `optimize_parameters()` (another file)
    # runs the network, backward and the optimizer's step
    write(project / "models" / "__init__.py", """
        def get_model(opts):
            model = None
            if opts.type == "seg":
                from .seg_model import SegModel
                model = SegModel()
            elif opts.type == "classifier":
                from .classifier import Classifier
                model = Classifier()
            model.initialize(opts)
            return model
    """)
    trainer = """
        import torch
        import torch.nn as nn

        class SegModel:
            def __init__(self):
                self.net = nn.Linear(8, 4).cuda()
                self.optimizer_S = torch.optim.Adam(self.net.parameters())

            def initialize(self, opts):
                pass

            def optimize_parameters(self):
                self.optimizer_S.zero_grad()
                loss = self.net(self.input).mean()
                loss.backward()
                self.optimizer_S.step()
    """
    write(project / "models" / "seg_model.py", trainer)
    write(project / "models" / "classifier.py", trainer.replace("class SegModel", "class Classifier"))
    write(project / "train.py", """
        from models import get_model

        def train(opts, loader):
            model = get_model(opts)
            for images, labels in loader:
                model.set_input(images, labels)
                model.optimize_parameters()
    """)
    assert _findings(".", "--select", "ML017") == [("train.py", "ML017", 5)]


_TRAINER_BASE = """
    import torch
    import torch.nn as nn

    class ModelBase:
        def __init__(self, opt):
            self.net = nn.Linear(8, 4).cuda()
            self.opt = torch.optim.Adam(self.net.parameters())

        def optimize_parameters(self, step):
            raise NotImplementedError
"""

_TRAINER_PLAIN = """
    from models.base import ModelBase

    class ModelPlain(ModelBase):
        def optimize_parameters(self, step):
            self.opt.zero_grad()
            loss = self.net(self.x).mean()
            loss.backward()
            self.opt.step()
"""

_TRAINER_SELECT = """
    def define_Model(opt):
        if opt["model"] == "plain":
            from models.plain import ModelPlain as M
        elif opt["model"] == "video":
            from models.video import ModelVideo as M
        else:
            raise NotImplementedError(opt["model"])
        m = M(opt)
        return m
"""

_TRAINER_MAIN = """
    from models.select import define_Model

    def main(opt, loader):
        model = define_Model(opt)
        for step, batch in enumerate(loader):
            model.feed_data(batch)
            model.optimize_parameters(step)
"""


def test_a_step_on_a_model_a_factory_imports_by_branch_under_one_name_is_reported(project):
    # cszn/KAIR: `define_Model` imports the class of the configured branch as `M` (`from
    # models.model_plain import ModelPlain as M`, ...), then `return M(opt)`: any of those classes;
    # `ModelVideo.optimize_parameters` hands the step to its base's through `super()`
    write(project / "models" / "__init__.py", "")
    write(project / "models" / "base.py", _TRAINER_BASE)
    write(project / "models" / "plain.py", _TRAINER_PLAIN)
    write(project / "models" / "video.py", """
        from models.plain import ModelPlain

        class ModelVideo(ModelPlain):
            def optimize_parameters(self, step):
                if step == 0:
                    self.net.requires_grad_(True)
                super(ModelVideo, self).optimize_parameters(step)
    """)
    write(project / "models" / "select.py", _TRAINER_SELECT)
    write(project / "main.py", _TRAINER_MAIN)
    assert _findings(".", "--select", "ML017") == [("main.py", "ML017", 5)]


def test_a_factory_one_of_whose_imported_classes_does_not_train_is_no_training_step(project):
    # the video model's `optimize_parameters` only logs: one branch's model trains nothing there
    write(project / "models" / "__init__.py", "")
    write(project / "models" / "base.py", _TRAINER_BASE)
    write(project / "models" / "plain.py", _TRAINER_PLAIN)
    write(project / "models" / "video.py", """
        from models.base import ModelBase

        class ModelVideo(ModelBase):
            def optimize_parameters(self, step):
                print(step)
    """)
    write(project / "models" / "select.py", _TRAINER_SELECT)
    write(project / "main.py", _TRAINER_MAIN)
    assert _findings(".", "--select", "ML017") == []


def test_a_factory_whose_imported_name_is_also_bound_otherwise_builds_nothing_known(project):
    # `M` may also be what `opt` hands in: the class is not known
    write(project / "models" / "__init__.py", "")
    write(project / "models" / "base.py", _TRAINER_BASE)
    write(project / "models" / "plain.py", _TRAINER_PLAIN)
    write(project / "models" / "video.py", _TRAINER_PLAIN.replace("ModelPlain", "ModelVideo"))
    write(project / "models" / "select.py", _TRAINER_SELECT.replace('        raise NotImplementedError(opt["model"])', '        M = opt["class"]'))
    write(project / "main.py", _TRAINER_MAIN)
    assert _findings(".", "--select", "ML017") == []


def test_a_super_call_is_a_call_of_the_bases_method(project):
    # `super().m()` / `super(Class, self).m()` in a method reach the first base's `m`; another
    # class named in `super(...)`, or a nested function's `super()`, is not followed
    from memlint.analysis.summaries import summarize
    from memlint.pipeline.project import Project
    from memlint.prescreen import Source

    files = {
        "base.py": "class Base:\n    def step(self):\n        return 1\n",
        "sub.py": textwrap.dedent("""
            from base import Base

            class Sub(Base):
                def step(self):
                    return super().step()

                def again(self):
                    return super(Sub, self).step()

                def other(self):
                    return super(Base, self).step()
        """),
    }
    paths = [write(project / name, text) for name, text in files.items()]
    built = Project([(path, name, summarize(Source(text))) for path, (name, text) in zip(paths, files.items())])
    sub = summarize(Source(files["sub.py"]))["functions"]
    assert [ref for ref, *_ in sub["Sub.step"]["calls"]] == [["p", "step"]]
    assert [ref for ref, *_ in sub["Sub.again"]["calls"]] == [["p", "step"]]
    assert sub["Sub.other"].get("calls", []) == []
    assert built.resolve(1, "Sub.step", ["p", "step"]) == (0, "Base.step")


_ENGINE = """
    import torch

    class Engine:
        def __init__(self, loader, use_gpu=True):
            self.loader = loader
            self.use_gpu = use_gpu

        def train(self):
            for data in self.loader:
                summary = self.forward_backward(data)
                print(summary)

        def forward_backward(self, data):
            raise NotImplementedError
"""

_SOFTMAX_ENGINE = """
    from engine import Engine

    class SoftmaxEngine(Engine):
        def __init__(self, loader, model, optimizer):
            super().__init__(loader)
            self.model = model.cuda()
            self.optimizer = optimizer

        def forward_backward(self, data):
            loss = self.model(data.cuda()).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            return loss.item()
"""


def test_a_loop_calling_a_placeholder_every_override_of_which_trains_is_reported(project):
    # KaiyangZhou/deep-person-reid: `Engine.train`'s loop calls `self.forward_backward(data)`, which
    # the base leaves to its subclasses; every override runs the model, backward and the step
    write(project / "engine.py", _ENGINE)
    write(project / "softmax.py", _SOFTMAX_ENGINE)
    write(project / "triplet.py", _SOFTMAX_ENGINE.replace("SoftmaxEngine", "TripletEngine"))
    assert _findings(".", "--select", "ML017") == [("engine.py", "ML017", 9)]


def test_a_loop_calling_a_placeholder_with_an_override_that_does_not_train_stays_silent(project):
    write(project / "engine.py", _ENGINE)
    write(project / "softmax.py", _SOFTMAX_ENGINE)
    write(project / "scorer.py", """
        import torch
        from engine import Engine

        class Scorer(Engine):
            def forward_backward(self, data):
                with torch.no_grad():
                    return self.model(data.cuda()).mean().item()
    """)
    assert _findings(".", "--select", "ML017") == []
    # with no override at all, the placeholder does nothing known
    write(project / "scorer.py", "")
    write(project / "softmax.py", "")
    assert _findings(".", "--select", "ML017") == []


_PICKED_TRAINER = """
    import torch
    import torch.nn as nn

    class Base:
        def optimize(self, batch):
            raise NotImplementedError

    class Plain(Base):
        def __init__(self):
            self.net = nn.Linear(8, 4).cuda()
            self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

        def optimize(self, batch):
            self.opt.zero_grad()
            loss = self.net(batch).mean()
            loss.backward()
            self.opt.step()

    class Scaled(Plain):
        def optimize(self, batch):
            self.opt.zero_grad()
            loss = 2 * self.net(batch).mean()
            loss.backward()
            self.opt.step()

    def get_trainer_class(name):
        return globals()[name]
"""

_PICKED_MAIN = """
    import trainers

    def main(args, loader):
        trainer_class = trainers.get_trainer_class(args.trainer)
        trainer = trainer_class()
        for batch in loader:
            trainer.optimize(batch)
"""


def test_a_step_on_an_instance_of_a_class_picked_from_globals_is_reported(project):
    # facebookresearch/DomainBed: `algorithm_class = algorithms.get_algorithm_class(name)` returns
    # `globals()[name]`; every class of that module with a concrete `optimize` trains (the abstract
    # placeholder of the base is no candidate)
    write(project / "trainers.py", _PICKED_TRAINER)
    write(project / "main.py", _PICKED_MAIN)
    assert _findings(".", "--select", "ML017") == [("main.py", "ML017", 6)]


def test_a_picked_class_whose_method_only_some_candidates_train_with_is_no_step(project):
    # one candidate's `optimize` only logs: the call tells nothing about a training step
    write(project / "trainers.py", _PICKED_TRAINER + """
    class Logger(Base):
        def optimize(self, batch):
            print(batch)
""")
    write(project / "main.py", _PICKED_MAIN)
    assert _findings(".", "--select", "ML017") == []


def test_a_picked_class_method_shared_with_an_unrelated_class_is_no_step(project):
    # `optimize` of a class outside the candidates' family (no common base defining it) is another
    # method that happens to share the name
    write(project / "trainers.py", _PICKED_TRAINER + """
    class Tuner:
        def __init__(self):
            self.net = nn.Linear(8, 4).cuda()
            self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

        def optimize(self, batch):
            self.opt.zero_grad()
            self.net(batch).mean().backward()
            self.opt.step()
""")
    write(project / "main.py", _PICKED_MAIN)
    assert _findings(".", "--select", "ML017") == []


def test_a_step_on_a_model_a_factory_imports_by_name_is_reported(project):
    # taesungp/contrastive-unpaired-translation: `create_model(opt)` instantiates the class
    # `find_model_using_name` finds in the module `importlib.import_module` loads; every model class
    # of the package with a concrete `optimize_parameters` runs its network, backward and step
    write(project / "models" / "__init__.py", """
        import importlib

        def find_model_using_name(name):
            lib = importlib.import_module("models." + name + "_model")
            found = None
            for key, cls in lib.__dict__.items():
                if key.lower() == name + "model":
                    found = cls
            return found

        def create_model(opt):
            model = find_model_using_name(opt.model)
            instance = model(opt)
            return instance
    """)
    write(project / "models" / "base_model.py", """
        class BaseModel:
            def optimize_parameters(self):
                pass
    """)
    write(project / "models" / "gan_model.py", """
        import torch
        import torch.nn as nn
        from models.base_model import BaseModel

        class GanModel(BaseModel):
            def __init__(self, opt):
                self.net = nn.Linear(8, 4).cuda()
                self.optimizer = torch.optim.Adam(self.net.parameters())

            def set_input(self, data):
                self.data = data

            def optimize_parameters(self):
                self.optimizer.zero_grad()
                self.net(self.data).mean().backward()
                self.optimizer.step()
    """)
    write(project / "train.py", """
        from models import create_model

        def train(opt, dataset):
            model = create_model(opt)
            for data in dataset:
                model.set_input(data)
                model.optimize_parameters()
    """)
    assert _findings(".", "--select", "ML017") == [("train.py", "ML017", 5)]


def test_the_methods_of_a_picked_class_run_per_step_where_every_candidate_trains(project):
    # the host tensor in `Scaled.optimize`, reached from the loop over the loader through the class
    # `get_trainer_class` picks, is built on every step
    write(project / "trainers.py", _PICKED_TRAINER.replace("loss = 2 * self.net(batch).mean()", "w = torch.ones(4).cuda()\n            loss = (w * self.net(batch)).mean()"))
    write(project / "main.py", _PICKED_MAIN)
    assert ("trainers.py", "ML013", 22) in _findings(".", "--select", "ML013")


def test_a_factory_whose_returned_name_may_hold_something_else_names_no_class(project):
    write(project / "models" / "__init__.py", """
        def get_model(opts):
            if opts.type == "seg":
                from .seg_model import SegModel
                model = SegModel()
            else:
                model = load_model(opts)
            return model
    """)
    write(project / "models" / "seg_model.py", TD3_AGENT.replace("class TD3", "class SegModel").replace("def train(", "def optimize_parameters("))
    write(project / "train.py", """
        from models import get_model

        def train(opts, loader):
            model = get_model(opts)
            for images, labels in loader:
                model.optimize_parameters()
    """)
    assert _findings(".", "--select", "ML017") == []


def test_a_loss_helper_of_another_file_reached_through_a_registry_runs_the_model_it_is_handed(project):
    # ermongroup/ddim: `loss = loss_registry[config.model.type](model, x, t, e, b)` (functions/losses.py
    # runs the model), then backward and the optimizer's step in the loop itself
    write(project / "losses.py", """
        def noise_estimation_loss(model, x0, t):
            return (model(x0, t) - x0).square().mean()

        loss_registry = {"simple": noise_estimation_loss}
    """)
    write(project / "runner.py", """
        import torch
        from losses import loss_registry

        def train(config, loader, device):
            model = Model(config).to(device)
            optimizer = get_optimizer(config, model.parameters())
            for x, t in loader:
                model.train()
                loss = loss_registry[config.model.type](model, x.to(device), t)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    """)
    assert _findings(".", "--select", "ML017") == [("runner.py", "ML017", 7)]


def test_a_method_of_another_file_that_steps_an_optimizer_known_by_its_construction_trains(project):
    # SEGAN-style names: `self.Dopt = optim.Adam(...)` is an optimizer by what built it, not by its name
    write(project / "gan.py", """
        import torch
        import torch.optim as optim

        class GAN:
            def __init__(self):
                self.D = torch.nn.Linear(8, 1).cuda()
                self.Dopt = optim.Adam(self.D.parameters())

            def update(self, x):
                self.Dopt.zero_grad()
                loss = self.D(x).mean()
                loss.backward()
                self.Dopt.step()
    """)
    write(project / "main.py", """
        from gan import GAN

        def main(loader):
            gan = GAN()
            for x in loader:
                gan.update(x)
    """)
    assert _findings(".", "--select", "ML017") == [("main.py", "ML017", 5)]
    write(project / "gan.py", (project / "gan.py").read_text().replace("optim.Adam(self.D.parameters())", "make_stepper(self.D)"))
    assert _findings(".", "--select", "ML017") == []


def test_a_factory_that_may_return_something_else_names_no_class(project):
    write(project / "TD3.py", TD3_AGENT)
    write(project / "main.py", """
        import TD3

        def make_agent(args):
            if args.agent == "td3":
                return TD3.TD3()
            return load_agent(args)

        def main(args, buffer):
            agent = make_agent(args)
            for t in range(1000):
                agent.train(buffer)
    """)
    assert _findings(".", "--select", "ML017") == []


def test_a_lower_case_class_of_a_sibling_module_named_like_its_folder_is_found(project):
    # sfujim/BCQ: discrete_BCQ/main.py does `import discrete_BCQ` (the sibling file, not the folder)
    # and builds `discrete_BCQ.discrete_BCQ(...)`; another function binds `policy` to another class
    # whose `train` does no step of its own
    write(project / "discrete_BCQ" / "discrete_BCQ.py", TD3_AGENT.replace("class TD3", "class discrete_BCQ"))
    write(project / "discrete_BCQ" / "DQN.py", "class DQN:\n    def train(self, buffer):\n        return buffer\n")
    write(project / "discrete_BCQ" / "main.py", """
        import DQN
        import discrete_BCQ

        def behavioural(buffer):
            policy = DQN.DQN()
            for t in range(1000):
                policy.train(buffer)

        def train_BCQ(buffer):
            policy = discrete_BCQ.discrete_BCQ()
            for t in range(1000):
                policy.train(buffer)
    """)
    assert _findings(".", "--select", "ML017") == [("discrete_BCQ/main.py", "ML017", 11)]


ENGINE = """
class Engine(object):
    def train(self, **kwargs):
        state = {"model": kwargs["model"], "loader": kwargs["loader"], "epoch": 0}
        state["optimizer"] = kwargs["optim_method"](state["model"].parameters())
        while state["epoch"] < kwargs["max_epoch"]:
            state["model"].train()
            for sample in state["loader"]:
                state["optimizer"].zero_grad()
                loss, state["output"] = state["model"].loss(sample)
                loss.backward()
                state["optimizer"].step()
            state["epoch"] += 1
"""


def test_a_module_that_never_names_torch_trains_what_the_projects_torch_code_gives_it(project):
    # jakesnell/prototypical-networks: protonets/engine.py imports nothing of torch; train.py, which
    # does and puts the model on cuda, hands it the model and the optimizer class
    write(project / "protonets" / "__init__.py", "")
    write(project / "protonets" / "engine.py", ENGINE)
    write(project / "train.py", """
        import torch
        from protonets.engine import Engine

        model = torch.nn.Linear(4, 2).cuda()
        Engine().train(model=model, loader=loader, optim_method=torch.optim.Adam, max_epoch=10)
    """)
    assert _findings(".", "--select", "ML017") == [("protonets/engine.py", "ML017", 7)]
    # alone, or imported only by code that never names torch either: not torch code
    assert _findings("protonets/engine.py", "--select", "ML017") == []
    write(project / "train.py", "from protonets.engine import Engine\nEngine().train(model=model)\n")
    assert _findings(".", "--select", "ML017") == []


def test_a_library_module_whose_importer_uses_cuda_is_reported(project):
    write(project / "agent.py", PPO_AGENT)
    write(project / "main.py", """
        import torch
        from agent import Agent

        torch.set_default_device("cuda")
        agent = Agent()
        agent.update(batches)
    """)
    assert _findings(".", "--select", "ML017") == [("agent.py", "ML017", 11)]


def _notebook(*cells: str) -> str:
    return json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {},
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c} for c in cells],
    })


def test_a_library_module_a_cuda_notebook_imports_is_reported(project):
    # DmitryUlyanov/deep-image-prior: utils/common_utils.py's optimize() trains every notebook's
    # network; only a CPU-only script and the notebooks (dtype = torch.cuda.FloatTensor) import it.
    write(project / "agent.py", PPO_AGENT)
    write(project / "plot.py", """
        from agent import Agent

        Agent().update(batches)
    """)
    (project / "run.ipynb").write_text(_notebook("import torch\nfrom agent import Agent\n", "torch.set_default_device('cuda')\nAgent().update(batches)\n"))
    assert _findings(".", "--select", "ML017") == [("agent.py", "ML017", 11)]


def test_project_context_counts_a_notebook_not_linted(project):
    write(project / "agent.py", PPO_AGENT)
    write(project / "plot.py", """
        from agent import Agent

        Agent().update(batches)
    """)
    (project / "run.ipynb").write_text(_notebook("import torch\nfrom agent import Agent\n", "torch.set_default_device('cuda')\n"))
    assert _findings("agent.py", "plot.py", "--select", "ML017") == []
    assert _findings("--project-context", "agent.py", "plot.py", "--select", "ML017") == [("agent.py", "ML017", 11)]


def test_a_library_module_only_cpu_notebooks_import_stays_cpu_only(project):
    write(project / "agent.py", PPO_AGENT)
    (project / "run.ipynb").write_text(_notebook("from agent import Agent\n", "%matplotlib inline\nAgent().update(batches)\n"))
    assert _findings(".", "--select", "ML017") == []


def test_a_library_module_reexported_by_a_package_to_a_cuda_script_is_reported(project):
    # ikostrikov/pytorch-a2c-ppo-acktr-gail: main.py (cuda) imports the package whose __init__.py imports ppo.py.
    write(project / "algo" / "agent.py", PPO_AGENT)
    write(project / "algo" / "__init__.py", "from .agent import Agent\n")
    write(project / "main.py", """
        import torch
        from algo import Agent

        agent = Agent()
        agent.update([(s.cuda(), a.cuda()) for s, a in batches])
    """)
    assert _findings(".", "--select", "ML017") == [("algo/agent.py", "ML017", 11)]


def test_a_library_module_using_the_projects_device_helper_is_reported(project):
    # ShangtongZhang/DeepRL: the agent star-imports the package whose utils pick the device
    # (Config.DEVICE = torch.device("cuda:0")); the launcher that imports the agents does not parse.
    write(project / "rl" / "utils.py", """
        import torch
        import torch.nn as nn

        DEVICE = torch.device("cuda:0")
    """)
    write(project / "rl" / "agent.py", PPO_AGENT.replace("import torch\nfrom torch import nn\n", "from .utils import *\n"))
    write(project / "rl" / "__init__.py", "from .agent import *\n")
    assert _findings(".", "--select", "ML017") == [("rl/agent.py", "ML017", 10)]


def test_a_library_module_whose_own_imports_name_no_device_stays_cpu_only(project):
    # The nearest silent case: the agent's project imports mention no accelerator either.
    write(project / "rl" / "utils.py", """
        import torch
        import torch.nn as nn

        def tensor(x):
            return torch.as_tensor(x)
    """)
    write(project / "rl" / "agent.py", PPO_AGENT.replace("import torch\nfrom torch import nn\n", "from .utils import *\n"))
    write(project / "rl" / "__init__.py", "from .agent import *\n")
    assert _findings(".", "--select", "ML017") == []


# ---------------------------------------------------------------------------- star imports

STAR_BODY = """
from .utils import *


class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3)

    def forward(self, x):
        return F.relu(self.conv1(x))
"""


def test_what_a_star_import_of_a_project_module_brings_is_read_from_that_module(project):
    # ShangtongZhang/DeepRL: network_bodies.py has torch, nn and F only from `from .network_utils import *`.
    write(project / "pkg" / "__init__.py", "")
    write(project / "pkg" / "utils.py", """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
    """)
    write(project / "pkg" / "body.py", STAR_BODY)
    assert _findings(".", "--select", "ML003") == [("pkg/body.py", "ML003", 10)]


def test_a_star_imported_name_the_project_binds_to_something_else_is_not_torchs(project):
    # The nearest silent case: the star-imported module's `F` is not torch.nn.functional, which the
    # project pass reads there (the convention alone would take it for torch's).
    write(project / "pkg" / "__init__.py", "")
    write(project / "pkg" / "utils.py", """
        import torch.nn as nn
        from mylib import functional as F
    """)
    write(project / "pkg" / "body.py", STAR_BODY)
    assert _findings(".", "--select", "ML003") == []
    assert _findings("pkg/body.py", "--select", "ML003") == [("pkg/body.py", "ML003", 10)]  # alone: the convention


# ---------------------------------------------------------------------------- ML017

TRAIN_EPOCH = """
import torch

def train_epoch(model, optimizer, graph, features, labels):
    model.train()
    logits = model(graph, features)
    loss = torch.nn.functional.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
"""


def test_an_epoch_loop_calling_a_training_step_of_another_file(project):
    # benchmarking-gnns' full-graph trainers: the epoch loop's file mentions neither backward nor
    # `step`; the step is the helper's (FileView.update_calls), the loop is the caller's
    write(project / "train_steps.py", TRAIN_EPOCH)
    write(project / "main.py", """
        import torch
        from train_steps import train_epoch

        device = torch.device("cuda")
        model = build().to(device)
        optimizer = torch.optim.Adam(model.parameters())
        for epoch in range(100):
            train_epoch(model, optimizer, graph, features, labels)
    """)
    assert _findings(".", "--select", "ML017") == [("main.py", "ML017", 7)]
    assert _findings("main.py", "--select", "ML017") == []  # alone, main.py cannot know what train_epoch does


def test_a_helper_of_another_file_that_steps_each_optimizer_of_a_list(project):
    # a trainer's `step(opt_list)` helper: its only loop, over the optimizers, is its own step on
    # every call (summaries' `updates`), so the loop that calls it per batch steps
    write(project / "utils.py", """
        def step_all(opt_list):
            for opt in opt_list:
                opt.step()

        def step_schedulers(schedulers):
            for scheduler in schedulers:
                scheduler.step()
    """)
    write(project / "main.py", """
        import torch
        from utils import step_all, step_schedulers

        model = build().cuda()
        opt_a = torch.optim.Adam(model.parameters())
        for x in loader:
            loss = model(x.cuda()).mean()
            loss.backward()
            step_all([opt_a])
        for x in loader:
            loss = model(x.cuda()).mean()
            loss.backward()
            step_schedulers(schedulers)
    """)
    assert _findings(".", "--select", "ML017") == [("main.py", "ML017", 6)]


def test_a_helper_of_another_file_that_only_backpropagates_is_no_training_step(project):
    write(project / "losses.py", """
        def backprop(loss):
            loss.backward()
    """)
    write(project / "main.py", """
        import torch
        from losses import backprop

        for x in loader:
            backprop(model(x.cuda()).sum())  # gradients for a saliency map: no optimizer steps
            maps.append(x.grad)
    """)
    assert _findings(".", "--select", "ML017") == []


# ---------------------------------------------------------------------------- ML013


def test_a_host_tensor_moved_by_a_helper_of_another_file(project):
    # CSAIL semantic segmentation: lib/parallel.py's `async_copy_to` returns a tensor moved with
    # `.cuda(dev)`; eval.py makes a zeros buffer on the host per image and hands it to it
    write(project / "parallel.py", """
        import torch

        def async_copy_to(obj, dev):
            if torch.is_tensor(obj):
                v = obj.cuda(dev, non_blocking=True)
                return v
            if isinstance(obj, (list, tuple)):
                return [async_copy_to(o, dev) for o in obj]
            return obj
    """)
    write(project / "evaluate.py", """
        import torch
        from parallel import async_copy_to

        def evaluate(model, loader, gpu):
            for batch in loader:
                with torch.no_grad():
                    scores = torch.zeros(1, 150, 64, 64)
                    scores = async_copy_to(scores, gpu)
                    scores = scores + model(async_copy_to(batch, gpu))
    """)
    assert _findings(".") == [("evaluate.py", "ML013", 7)]
    assert "async_copy_to(scores, gpu)" in _messages(".")[("evaluate.py", "ML013")]
    assert _findings("evaluate.py") == []  # alone, evaluate.py cannot know what async_copy_to does


def test_a_host_tensor_a_helper_of_another_file_indexes_moved_by_the_caller(project):
    # kuangliu/pytorch-retinanet: utils.one_hot_embedding indexes a host `torch.eye(n)` (a part of a
    # host tensor stays there); the loss slices the result and moves it with `Variable(t).cuda()`
    # on every forward
    write(project / "utils.py", """
        import torch

        def one_hot_embedding(labels, num_classes):
            y = torch.eye(num_classes)
            return y[labels]
    """)
    write(project / "loss.py", """
        import torch.nn as nn
        from torch.autograd import Variable
        from utils import one_hot_embedding

        class FocalLoss(nn.Module):
            def focal_loss_alt(self, x, y):
                t = one_hot_embedding(y.data.cpu(), 21)
                t = t[:, 1:]
                t = Variable(t).cuda()
                return (x * t).sum()

            def forward(self, x, y):
                return self.focal_loss_alt(x, y)
    """)
    assert _findings(".", "--select", "ML013") == [("loss.py", "ML013", 7)]
    assert "one_hot_embedding()" in _messages(".", "--select", "ML013")[("loss.py", "ML013")]
    assert _findings("loss.py", "--select", "ML013") == []  # alone, loss.py cannot know where the helper makes it


def test_a_helper_returning_a_function_of_a_host_tensor_of_another_file_is_moved_per_step(project):
    # ethanfetaya/NRI: sample_gumbel returns `-torch.log(eps - torch.log(u + eps))` of a host
    # `torch.rand` (`eps` a parameter defaulting to a number); the loop `.cuda()`s it every step
    write(project / "noise.py", """
        import torch

        def sample_gumbel(shape, eps=1e-10):
            u = torch.rand(shape).float()
            return - torch.log(eps - torch.log(u + eps))
    """)
    write(project / "train.py", """
        import torch
        from noise import sample_gumbel

        for x, y in train_loader:
            noise = sample_gumbel(x.size())
            noise = noise.cuda()
            loss = criterion(model(x.cuda() + noise), y.cuda())
            loss.backward()
            optimizer.step()
    """)
    assert _findings(".", "--select", "ML013") == [("train.py", "ML013", 5)]


GUMBEL = """
    import torch

    def gumbel_softmax(logits, hard=False):
        y = torch.softmax(logits, dim=-1)
        if hard:
            y_hard = torch.zeros(*logits.size())
            if y.is_cuda:
                y_hard = y_hard.cuda()
            y = y_hard.scatter_(-1, y.argmax(-1, keepdim=True), 1.0) - y.detach() + y
        return y
"""


def test_a_flag_every_call_in_another_file_turns_on_runs_its_branch(project):
    # ethanfetaya/NRI: `gumbel_softmax(..., hard=False)`; where every call passes `hard=True`, the
    # host `torch.zeros` of its hard branch is made and moved on every batch
    write(project / "utils.py", GUMBEL)
    write(project / "train.py", """
        import torch
        from utils import gumbel_softmax

        for x, y in train_loader:
            edges = gumbel_softmax(model(x.cuda()), hard=True)
            loss = criterion(edges, y.cuda())
            loss.backward()
            optimizer.step()
    """)
    assert _findings(".", "--select", "ML013") == [("utils.py", "ML013", 6)]


def test_a_flag_one_call_leaves_configured_keeps_its_branch_opt_in(project):
    write(project / "utils.py", GUMBEL)
    write(project / "train.py", """
        import torch
        from utils import gumbel_softmax

        for x, y in train_loader:
            edges = gumbel_softmax(model(x.cuda()), hard=args.hard)
            loss = criterion(edges, y.cuda())
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            for x, y in valid_loader:
                edges = gumbel_softmax(model(x.cuda()), hard=True)
    """)
    assert _findings(".", "--select", "ML013") == []


MIXER = """
import torch
import torch.nn as nn

class Mixer(nn.Module):
    def __init__(self, n, factorize=False):
        super().__init__()
        self.n = n
        self.factorize = factorize

    def forward(self, x):
        if self.factorize:
            x = x + torch.eye(self.n).to(x.device)
        return x
"""


def test_an_attribute_flag_a_construction_in_another_file_leaves_off_is_opt_in(project):
    # kamenbliznashki/normalizing_flows: `Glow(...)` never passes `lu_factorize`, so the host
    # `torch.eye` of `Invertible1x1Conv.forward`'s LU branch runs for no instance of the program
    write(project / "layers.py", MIXER)
    write(project / "model.py", """
        from layers import Mixer

        def build(n, factorize=False):
            return Mixer(n, factorize)

        net = build(4)
    """)
    assert _findings(".", "--select", "ML013") == []


def test_an_attribute_flag_every_construction_in_another_file_turns_on_runs_its_branch(project):
    write(project / "layers.py", MIXER)
    write(project / "model.py", """
        from layers import Mixer

        net = Mixer(4, factorize=True)
    """)
    assert _findings(".", "--select", "ML013") == [("layers.py", "ML013", 12)]


def test_a_helper_of_another_file_called_behind_a_configured_choice_runs_per_step(project):
    # locuslab/fast_adversarial's MNIST evaluation: `if args.attack == 'pgd': attack_pgd(...)` per
    # test batch, whose restarts and steps each bind `_` again
    write(project / "attacks.py", """
        import torch
        import torch.nn.functional as F

        def attack_pgd(model, x, y, restarts, steps):
            best = torch.zeros(y.shape[0]).cuda()
            for _ in range(restarts):
                delta = torch.zeros_like(x, requires_grad=True)
                for _ in range(steps):
                    F.cross_entropy(model(x + delta), y).backward()
                best = torch.max(best, F.cross_entropy(model(x + delta), y, reduction="none"))
            return best
    """)
    write(project / "evaluate.py", """
        from attacks import attack_pgd

        for x, y in test_loader:
            x, y = x.cuda(), y.cuda()
            if args.attack == "pgd":
                delta = attack_pgd(model, x, y, args.restarts, 10)
            elif args.attack == "none":
                delta = 0
    """)
    assert _findings(".", "--select", "ML013") == [("attacks.py", "ML013", 5)]
    write(project / "evaluate.py", """
        from attacks import attack_pgd

        for x, y in test_loader:
            x, y = x.cuda(), y.cuda()
            if args.log_attack:
                delta = attack_pgd(model, x, y, args.restarts, 10)
    """)
    assert _findings(".", "--select", "ML013") == []


def test_a_host_tensor_moved_by_a_star_imported_helper_of_another_file(project):
    # heykeetae/Self-Attention-GAN: utils.py's tensor2var moves its argument behind a CUDA check and
    # returns it wrapped in Variable; trainer.py star-imports utils and feeds it torch.randn per step
    write(project / "utils.py", """
        import torch
        from torch.autograd import Variable

        def tensor2var(x, grad=False):
            if torch.cuda.is_available():
                x = x.cuda()
            return Variable(x, requires_grad=grad)
    """)
    write(project / "trainer.py", """
        import torch
        from utils import *

        def train(G, loader, optimizer, z_dim):
            for real in loader:
                z = tensor2var(torch.randn(real.size(0), z_dim))
                loss = G(z).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    """)
    assert _findings(".") == [("trainer.py", "ML013", 6)]
    assert _findings("trainer.py") == []  # alone, trainer.py cannot know what tensor2var does


def test_a_star_imported_name_the_function_binds_itself_is_no_helper_call(project):
    write(project / "utils.py", """
        import torch

        def tensor2var(x):
            return x.cuda()
    """)
    write(project / "trainer.py", """
        import torch
        from utils import *

        def train(G, loader, optimizer, z_dim, tensor2var):
            for real in loader:
                z = tensor2var(torch.randn(real.size(0), z_dim))
                loss = G(z).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    """)
    assert _findings(".", "--select", "ML013") == []


MASKING = """
    import torch

    class CausalMask:
        def __init__(self, b, n, device="cpu"):
            self.mask = torch.triu(torch.ones(b, 1, n, n, dtype=torch.bool), diagonal=1).to(device)
"""
ATTENTION = """
    import torch.nn as nn
    from utils.masking import CausalMask

    class Attention(nn.Module):
        def forward(self, q, k):
            return (q @ k.transpose(-2, -1)).masked_fill(CausalMask(q.shape[0], q.shape[1], device=q.device).mask, 0.0)
"""


def test_an_import_means_the_module_on_the_importers_path(project):
    # LTSF-Linear: utils/masking.py and a copy in FEDformer/utils/masking.py, no __init__.py; scripts
    # run from the repository root import the first, scripts run from FEDformer/ the copy
    write(project / "utils" / "masking.py", MASKING)
    write(project / "layers" / "attention.py", ATTENTION)
    write(project / "FEDformer" / "utils" / "masking.py", MASKING)
    write(project / "FEDformer" / "layers" / "attention.py", ATTENTION)
    assert _findings(".") == [("FEDformer/utils/masking.py", "ML013", 5), ("utils/masking.py", "ML013", 5)]


def test_an_import_two_equally_near_modules_could_mean_is_not_resolved(project):
    write(project / "a" / "utils" / "masking.py", MASKING)
    write(project / "b" / "utils" / "masking.py", MASKING)
    write(project / "attention.py", ATTENTION)
    assert _findings(".") == []


def test_an_import_means_the_module_beside_the_importer_over_another_trees(project):
    # NRI (an __init__.py at its root, so its utils.py is `NRI.utils`) linted with curl (a top-level
    # utils.py): modules.py's `from utils import *` still means the utils.py beside it
    write(project / "NRI" / "__init__.py", "")
    write(project / "NRI" / "utils.py", """
        import torch

        def sample_gumbel(shape, eps=1e-10):
            u = torch.rand(shape).float()
            return - torch.log(eps - torch.log(u + eps))

        def gumbel_softmax_sample(logits, tau=1, eps=1e-10):
            noise = sample_gumbel(logits.size(), eps=eps)
            if logits.is_cuda:
                noise = noise.cuda()
            return torch.softmax((logits + noise) / tau, dim=-1)
    """)
    write(project / "NRI" / "modules.py", """
        import torch.nn as nn
        from utils import *

        class Encoder(nn.Module):
            def forward(self, x):
                return gumbel_softmax_sample(self.fc(x))
    """)
    write(project / "curl" / "utils.py", "import torch\n\ndef eval_mode(*models):\n    return models\n")
    assert _findings("NRI", "curl", "--select", "ML013") == [("NRI/utils.py", "ML013", 8)]
    write(project / "sac" / "utils.py", "import torch\n\ndef soft_update(a, b):\n    return a\n")
    assert _findings("NRI", "curl", "sac", "--select", "ML013") == [("NRI/utils.py", "ML013", 8)]  # two such trees


def test_a_package_at_the_root_wins_over_a_module_beside_a_package_module(project):
    # repo/utils/__init__.py and repo/models/utils.py: models/net.py's `from utils import load_ckpt`,
    # net.py reached from train.py at the root (`from models.net import *`), finds utils/__init__.py
    # (Python 3 searches the root, where the package `utils` is found): the package's import root, not
    # its own folder, is what is compared with the importer's folder
    from memlint.analysis.summaries import summarize
    from memlint.pipeline.project import Project
    from memlint.prescreen import Source

    files = {
        "utils/__init__.py": "import torch\n\ndef load_ckpt(path):\n    return torch.load(path)\n",
        "models/__init__.py": "",
        "models/utils.py": "def load_ckpt(path):\n    return path\n",
        "models/net.py": "from utils import load_ckpt\n",
        "train.py": "from models.net import *\n",
    }
    paths = [write(project / name, text) for name, text in files.items()]
    built = Project([(path, name, summarize(Source(text))) for path, (name, text) in zip(paths, files.items())])
    net = built.files[list(files).index("models/net.py")]
    assert built._module("utils", net) == list(files).index("utils/__init__.py")


def test_a_module_of_another_tree_not_on_the_importers_path_is_not_what_it_imports(project):
    # two repositories linted together: treeB/utils/datasets.py's `from utils.utils import f` finds
    # treeB/utils/utils.py (its folder's longer name), not treeA's package module canonically named
    # `utils.utils`; `from io import BytesIO` is the standard library's, not treeA's io.py
    from memlint.analysis.summaries import summarize
    from memlint.pipeline.project import Project
    from memlint.prescreen import Source

    files = {
        "treeA/lib/utils/__init__.py": "",
        "treeA/lib/utils/utils.py": "def f():\n    return 1\n",
        "treeA/lib/io.py": "def BytesIO():\n    return 1\n",
        "treeB/utils/utils.py": "def f():\n    return 2\n",
        "treeB/utils/datasets.py": "from io import BytesIO\nfrom utils.utils import f\n",
    }
    paths = [write(project / name, text) for name, text in files.items()]
    built = Project([(path, name, summarize(Source(text))) for path, (name, text) in zip(paths, files.items())])
    datasets = built.files[list(files).index("treeB/utils/datasets.py")]
    assert built._module("utils.utils", datasets) == list(files).index("treeB/utils/utils.py")
    assert built._module("io", datasets) is None


def test_a_script_that_imports_its_own_class_back_keeps_the_definition(project):
    # salesforce/awd-lstm-lm's weight_drop.py: its `__main__` test code does `from weight_drop import
    # WeightDrop`, which runs only as a script and leaves the class what the file defines
    write(project / "weight_drop.py", """
        import torch
        import torch.nn as nn

        class WeightDrop(nn.Module):
            def _setweights(self):
                self.mask = None
                mask = torch.ones(4, 1).cuda()
                return mask

            def forward(self, x):
                return x * self._setweights()

        if __name__ == "__main__":
            from weight_drop import WeightDrop
            WeightDrop()(torch.randn(4, 1).cuda())
    """)
    assert _findings(".") == [("weight_drop.py", "ML013", 7)]


# ---------------------------------------------------------------------------- loop scope across files


def test_a_function_with_its_own_pass_called_per_epoch_is_not_per_step(project):
    # `train` runs its pass over the loader itself; what it calls before that loop (the
    # clustering, in another file) runs once per epoch, not on every iteration of the epoch loop
    write(project / "clustering.py", """
        import torch

        def cluster(memory, k):
            return torch.zeros(k, memory.shape[1]).cuda()
    """)
    write(project / "train.py", """
        from clustering import cluster

        def train(loader, model, optimizer, memory):
            assignments = cluster(memory, 10)
            for x, y in loader:
                model(x.cuda()).mean().backward()
                optimizer.step()

        for epoch in range(start_epoch, epochs):
            train(train_loader, model, optimizer, memory)
    """)
    assert _findings(".", "--select", "ML013") == []


def test_a_helper_of_a_loop_cut_short_by_a_counter_is_not_per_step(project):
    write(project / "decode.py", """
        import torch

        def start_token(source, device):
            return torch.empty(1, 1).fill_(1).type_as(source).to(device)
    """)
    write(project / "validate.py", """
        from decode import start_token

        def run_validation(model, val_loader, device, num_examples=2):
            count = 0
            for batch in val_loader:
                count += 1
                model.decode(start_token(batch, device))
                if count == num_examples:
                    break
    """)
    assert _findings(".", "--select", "ML013") == []
# ---------------------------------------------------------------------------- classes re-exported by a package

PACKAGE_BASE = """
    import torch.nn as nn

    class BaseModel(nn.Module):
        def __str__(self):
            return super().__str__()
"""

MNIST = """
    import torch.nn as nn
    import torch.nn.functional as F
    from base import BaseModel

    class MnistModel(BaseModel):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(320, 50)

        def forward(self, x):
            x = F.relu(self.fc1(x))
            return F.dropout(x, training=self.training)
"""


def test_a_module_base_a_package_re_exports_by_a_star_import(project):
    # victoresque/pytorch-template: base/__init__.py has `from .base_model import *`, the model file
    # `from base import BaseModel`; `self.fc1` is then a layer of an nn.Module.
    write(project / "base" / "__init__.py", "from .base_model import *\n")
    write(project / "base" / "base_model.py", PACKAGE_BASE)
    write(project / "model.py", MNIST)
    assert _findings(".", "--select", "ML003") == [("model.py", "ML003", 11)]


def test_a_base_the_package_re_exports_that_is_no_module_makes_none(project):
    write(project / "base" / "__init__.py", "from .base_model import *\n")
    write(project / "base" / "base_model.py", "class BaseModel:\n    pass\n")
    write(project / "model.py", MNIST)
    assert _findings(".", "--select", "ML003") == []


ADAPTIVE_SOFTMAX = """
import torch
import torch.nn as nn

class AdaptiveSoftmax(nn.Module):
    def log_prob(self, h):
        prob = torch.zeros(h.size(0), 800).cuda()
        return prob + h.sum()
"""


def test_a_model_method_named_like_a_distribution_method_runs_per_step_in_another_file(project):
    # LiyuanLucasLiu/RAdam's language model: `evaluate(data_loader, lm_model)` calls
    # `lm_model.log_prob(x)` per batch, while the script's own code binds `lm_model = LM(...)`;
    # `log_prob` is a torch.distributions name too, but on a receiver named like a model it is the model's
    write(project / "adaptive.py", ADAPTIVE_SOFTMAX)
    write(project / "train.py", """
        from adaptive import AdaptiveSoftmax

        def evaluate(data_loader, lm_model):
            total = 0
            for words, labels in data_loader:
                total += lm_model.log_prob(words).sum().item()
            return total

        lm_model = AdaptiveSoftmax()
        evaluate(test_loader, lm_model)
    """)
    assert _findings(".") == [("adaptive.py", "ML013", 6)]


def test_a_distribution_method_on_a_receiver_not_named_like_a_model_reaches_no_model_method(project):
    write(project / "adaptive.py", ADAPTIVE_SOFTMAX)
    write(project / "train.py", """
        def evaluate(data_loader, dist):
            total = 0
            for words, labels in data_loader:
                total += dist.log_prob(words).sum().item()
            return total
    """)
    assert _findings(".") == []


# ---------------------------------------------------------------------------- ML015


BIGGAN_MODEL = """
import torch
from torch import nn, optim


class Generator(nn.Module):
    def __init__(self, lr=1e-4, no_optim=False):
        super().__init__()
        self.net = nn.Linear(8, 8)
        if no_optim:
            return
        self.optim = optim.Adam(params=self.parameters(), lr=lr)
"""


def test_a_half_instance_of_a_class_that_builds_its_own_adam_is_pure_half(project):
    # ajbrock/BigGAN-PyTorch: train.py casts `G = model.Generator(**config)` (the module chosen at
    # run time) to half; the class's __init__ builds `self.optim = optim.Adam(self.parameters())`.
    write(project / "BigGAN.py", BIGGAN_MODEL)
    write(project / "train.py", """
        import torch

        def run(config):
            model = __import__(config["model"])
            G = model.Generator(**config).to("cuda")
            G_ema = model.Generator(**{**config, "no_optim": True}).to("cuda")
            if config["G_fp16"]:
                G = G.half()
                G_ema = G_ema.half()
    """)
    assert _findings(".", "--select", "ML015") == [("train.py", "ML015", 8)]


def test_a_class_name_another_class_of_the_project_shares_without_adam_says_nothing(project):
    write(project / "BigGAN.py", BIGGAN_MODEL)
    write(project / "tfhub.py", "from torch import nn\n\n\nclass Generator(nn.Module):\n    pass\n")
    write(project / "train.py", """
        import torch

        def run(config):
            model = __import__(config["model"])
            G = model.Generator(**config).to("cuda")
            G = G.half()
    """)
    assert _findings(".", "--select", "ML015") == []

# ---------------------------------------------------------------------------- ML010


TRPO = """
from utils import *

def trpo_step(policy_net, states, advantages):
    loss = -(policy_net(states) * advantages).mean()
    grads = torch.autograd.grad(loss, policy_net.parameters())
    return grads
"""


def test_float64_in_a_script_trained_by_another_files_step_through_a_star_imported_torch(project):
    # trpo_step backpropagates with `torch.autograd.grad`, `torch` bound only by `from utils import *`;
    # the script mentions no backward, optimizer or training word of its own
    write(project / "utils.py", "import torch\n")
    write(project / "trpo.py", TRPO)
    script = """
        import torch
        from trpo import trpo_step
        torch.set_default_dtype(torch.float64)
        policy_net = Policy().to(torch.device("cuda"))
        for i in range(500):
            trpo_step(policy_net, states, advantages)
    """
    write(project / "run.py", script)
    assert _findings(".", "--select", "ML010") == [("run.py", "ML010", 3)]
    write(project / "trpo.py", TRPO.replace("grads = torch.autograd.grad(loss, policy_net.parameters())", "grads = None"))
    assert _findings(".", "--select", "ML010") == []  # nothing in the project trains


# ---------------------------------------------------------------------------- ML001: meters of another file


TRACKER = """
class LossTracker:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
"""


def test_a_meter_class_of_another_file_keeps_the_history_it_is_given(project):
    # not named like the classic AverageMeter: its `update` body, in utils.py, says it keeps `val`
    write(project / "utils.py", TRACKER)
    write(project / "train.py", """
        import torch
        from utils import LossTracker

        def train(model, loader, optimizer, criterion):
            losses = LossTracker()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.update(loss, x.size(0))
            return losses.sum / losses.count
    """)
    assert _findings(".", "--select", "ML001") == [("train.py", "ML001", 11)]
    write(project / "utils.py", TRACKER.replace("self.sum += val * n", "self.sum += val.item() * n"))
    assert _findings(".", "--select", "ML001") == []  # it keeps numbers
    # a slot of a dict on self keeps it as well (`self.stats["loss"] += val`)
    write(project / "utils.py", TRACKER.replace("self.sum = 0", "self.stats = {'sum': 0}").replace("self.sum += val * n", "self.stats['sum'] += val * n"))
    assert _findings(".", "--select", "ML001") == [("train.py", "ML001", 11)]


def test_a_project_whose_only_cuda_mention_hides_the_gpus_is_cpu_only(project):
    # ikostrikov/pytorch-a3c: main.py sets CUDA_VISIBLE_DEVICES to "" before it starts the workers;
    # that mention switches the GPU off: evidence of a CPU-only run, not of an accelerator.
    write(project / "train.py", """
        import torch

        def train(model, optimizer, loader):
            for x in loader:
                loss = model(x).sum()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    """)
    write(project / "main.py", """
        import os
        from train import train

        if __name__ == "__main__":
            os.environ["CUDA_VISIBLE_DEVICES"] = ""
            train(model, optimizer, loader)
    """)
    assert _findings(".", "--select", "ML017") == []
    write(project / "main.py", (project / "main.py").read_text().replace('""', '"0"'))
    assert _findings(".", "--select", "ML017") == [("train.py", "ML017", 4)]


def test_a_loop_whose_model_runs_in_a_loss_helper_of_another_file_is_reported(project):
    # yaodongyu/TRADES: `loss = trades_loss(model=model, ...)` of trades.py runs the model; the loop
    # backpropagates and steps itself.
    write(project / "trades.py", """
        import torch

        def trades_loss(model, x, y):
            return torch.nn.functional.cross_entropy(model(x), y)
    """)
    write(project / "train.py", """
        import torch
        from trades import trades_loss

        device = torch.device("cuda")

        def train(model, loader, optimizer):
            for x, y in loader:
                optimizer.zero_grad()
                loss = trades_loss(model=model, x=x.to(device), y=y.to(device))
                loss.backward()
                optimizer.step()
    """)
    assert _findings(".", "--select", "ML017") == [("train.py", "ML017", 7)]


def test_a_script_without_torch_whose_step_is_another_files_trainer_is_reported(project):
    # NVlabs/SPADE: train.py never writes "torch"; Pix2PixTrainer's methods (another file, which
    # names the GPUs) run the model, backpropagate and step on every call.
    write(project / "pix2pix_trainer.py", """
        import torch

        class Pix2PixTrainer:
            def __init__(self, opt):
                self.model = torch.nn.Linear(4, 2).cuda(opt.gpu_ids[0])
                self.optimizer_G = torch.optim.Adam(self.model.parameters())

            def run_generator_one_step(self, data):
                self.optimizer_G.zero_grad()
                loss = self.model(data).mean()
                loss.backward()
                self.optimizer_G.step()
    """)
    write(project / "train.py", """
        from pix2pix_trainer import Pix2PixTrainer

        trainer = Pix2PixTrainer(opt)
        for epoch in range(10):
            for data_i in dataloader:
                trainer.run_generator_one_step(data_i)
    """)
    assert _findings(".", "--select", "ML017") == [("train.py", "ML017", 5)]


def test_a_loop_calling_a_module_whose_forward_trains_is_reported(project):
    # dragen1860/MAML-Pytorch: `maml = Meta(args, config).to(device)`; each step calls `maml(...)`,
    # whose forward (meta.py) backpropagates and steps the meta-optimizer.
    write(project / "meta.py", """
        import torch
        from torch import nn

        class Meta(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Linear(4, 2)
                self.meta_optim = torch.optim.Adam(self.net.parameters())

            def forward(self, x):
                loss = self.net(x).sum()
                self.meta_optim.zero_grad()
                loss.backward()
                self.meta_optim.step()
                return loss.item()
    """)
    write(project / "train.py", """
        import torch
        from meta import Meta

        def main():
            device = torch.device("cuda")
            maml = Meta().to(device)
            for x in db:
                accs = maml(x.to(device))
    """)
    assert _findings(".", "--select", "ML017") == [("train.py", "ML017", 7)]


# ---------------------------------------------------------------------------- returned closures

RVAE_MODEL = """
import torch
import torch.nn as nn


class RVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

    def trainer(self, optimizer, loader):
        def train(i):
            x, y = loader.next_batch()
            loss = (self(x) - y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss.item()

        return {returned}
"""

RVAE_TRAIN = """
import torch
from model.rvae import RVAE

if __name__ == "__main__":
    rvae = RVAE()
    rvae = rvae.cuda()
    optimizer = torch.optim.Adam(rvae.parameters())
    train_step = rvae.trainer(optimizer, loader)
    for iteration in range(120000):
        train_step(iteration)
"""


def test_a_step_function_another_files_method_returns_is_the_loops_training_step(project):
    # kefirski/pytorch_RVAE: `train_step = rvae.trainer(optimizer, batch_loader)` hands back the
    # inner `train` of model/rvae.py (model, backward, step); train.py sits beside the package
    # `model/` in a directory that is a package itself, and finds it from its own folder.
    write(project / "__init__.py", "")
    write(project / "model" / "__init__.py", "")
    write(project / "model" / "rvae.py", RVAE_MODEL.format(returned="train"))
    write(project / "train.py", RVAE_TRAIN)
    assert _findings(".", "--select", "ML017") == [("train.py", "ML017", 9)]


@pytest.mark.parametrize("returned", ["train if loader else None", "step", "optimizer"])
def test_a_factory_that_may_hand_back_something_else_is_no_known_step(project, returned):
    # (`step` is no function of the method: the name is unknown; `optimizer` a parameter)
    write(project / "__init__.py", "")
    write(project / "model" / "__init__.py", "")
    write(project / "model" / "rvae.py", RVAE_MODEL.format(returned=returned))
    write(project / "train.py", RVAE_TRAIN)
    assert _findings(".", "--select", "ML017") == []


def test_a_step_function_called_only_behind_an_if_outside_loops_is_no_step_of_every_call(project):
    # gordicaleksa/pytorch-GAT: train_gat_cora runs the closure's TRAIN phase inside its epoch loop
    # (reported there) and its TEST phase once behind `if config["should_test"]:`; a profiling loop
    # that calls train_gat_cora from another file does not take a training step on each iteration
    # of its own, by what the project pass can tell
    write(project / "training.py", """
        import torch

        def get_main_loop(gat, optimizer):
            def main_loop(phase):
                loss = gat(phase).sum()
                if phase == "train":
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            return main_loop

        def train_gat(config):
            gat = torch.nn.Linear(4, 2).cuda()
            optimizer = torch.optim.Adam(gat.parameters())
            main_loop = get_main_loop(gat, optimizer)
            for epoch in range(100):
                main_loop("train")
            if config["should_test"]:
                main_loop("test")
    """)
    write(project / "playground.py", """
        from training import train_gat

        def profile(config):
            for run in range(20):
                train_gat(config)
    """)
    assert _findings(".", "--select", "ML017") == [("training.py", "ML017", 16)]


def test_a_step_on_an_agent_a_factory_builds_and_moves_is_reported(project):
    # `agent = make_agent(args).to(device)`: the module make_agent builds, moved (summaries' `_unmoved`)
    write(project / "TD3.py", TD3_AGENT)
    write(project / "factory.py", """
        import TD3

        def make_agent(args):
            if args.agent == "td3":
                return TD3.TD3()
            raise ValueError(args.agent)
    """)
    write(project / "main.py", """
        from factory import make_agent

        def main(args, buffer, device):
            agent = make_agent(args).to(device)
            for t in range(1000):
                agent.train(buffer)
    """)
    assert _findings(".", "--select", "ML017") == [("main.py", "ML017", 5)]


def test_an_instance_a_third_party_factory_builds_is_no_project_instance():
    # `env = gym.make(...)`, `tok = AutoTokenizer.from_pretrained(...)`: no ["i", callee, m, obj]
    # (the project pass would look for a class behind every such call); `import DDPG` still counts
    from memlint.analysis.summaries import summarize
    import textwrap

    from memlint.prescreen import Source

    summary = summarize(Source(textwrap.dedent("""
        import gym
        import DDPG
        from transformers import AutoTokenizer

        def main():
            env = gym.make("CartPole-v1")
            env.step(0)
            tok = AutoTokenizer.from_pretrained("bert")
            tok.encode("x")
            policy = DDPG.make()
            policy.train(0)
    """)))
    built = [ref for ref, *_ in summary["functions"]["main"]["calls"] if ref[0] == "i"]
    assert built == [["i", "DDPG.make", "train", "policy"]]


def test_a_files_grad_free_methods_are_only_names_its_rules_may_ask_about():
    # FileView.grad_free_methods: of the component's grad-free methods, only those
    # method_runs_module accepts (its words, or the file's model_methods); FileView.model_methods
    # leaves out names it always rejects (`_step`): the view's digest changes only with an answer
    import textwrap
    from pathlib import Path

    from memlint.analysis.summaries import summarize
    from memlint.pipeline.project import Project
    from memlint.prescreen import Source

    files = {
        "agent.py": textwrap.dedent("""
            import torch
            from torch import nn

            class Agent(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.actor = nn.Linear(4, 2)

                def sample_action(self, obs):
                    with torch.no_grad():
                        return self.actor(obs)

                def tally(self, obs):
                    with torch.no_grad():
                        return self.actor(obs)

                def _step(self, obs):
                    return self.actor(obs)
        """),
        "train.py": "from agent import Agent\n\nagent = Agent()\n\ndef run(obs):\n    agent._step(obs)\n    return agent.sample_action(obs)\n",
    }
    project = Project([(Path(name), name, summarize(Source(text))) for name, text in files.items()])
    view = project.view(1)
    assert view.grad_free_methods == frozenset({"sample_action"})
    assert "_step" not in view.model_methods


def test_a_helper_called_in_every_branch_of_an_if_else_runs_on_every_step(project):
    # KellerJordan/cifar10-airbench: one step in four trains, the others only evaluate; both run the helper
    write(project / "utils.py", """
        import torch

        def make_mask(inputs):
            return torch.zeros(len(inputs)).cuda()
    """)
    write(project / "train.py", """
        import torch
        from utils import make_mask

        for step, (x, y) in enumerate(train_loader):
            if step % 4 == 0:
                mask = make_mask(x)
                loss = (criterion(model(x), y) * mask).sum()
                loss.backward()
                optimizer.step()
            else:
                with torch.no_grad():
                    mask = make_mask(x)
    """)
    assert _findings(".", "--select", "ML013") == [("utils.py", "ML013", 4)]


TRAINERS = """
import torch

class StyleTrainer:
    def gen_update(self, x, z_dim):
        z = torch.randn(x.size(0), z_dim).cuda()
        return z

class PlainTrainer:
    def gen_update(self, x, z_dim):
        return x
"""


@pytest.mark.parametrize("pick", ["chain", "expression", "library", "rebound"])
def test_a_per_step_method_of_one_of_several_classes_a_script_picks(project, pick):
    """NVlabs/MUNIT (issue 27): train.py binds `trainer` to one of two trainer classes of trainer.py in
    an `if`/`elif`, then calls `trainer.gen_update(...)` on every step: each class's method runs per
    step.  Where one alternative is not the project's, or the name is also bound otherwise, silent."""
    write(project / "trainers.py", TRAINERS)
    picks = {
        "chain": "if kind == 'style':\n    trainer = StyleTrainer()\nelif kind == 'plain':\n    trainer = PlainTrainer()",
        "expression": "trainer = StyleTrainer() if kind == 'style' else PlainTrainer()",
        "library": "trainer = StyleTrainer() if kind == 'style' else lib.Trainer()",
        "rebound": "trainer = StyleTrainer() if kind == 'style' else PlainTrainer()\ntrainer = wrap(trainer)",
    }
    script = "import lib\nfrom trainers import StyleTrainer, PlainTrainer\n\nkind = 'style'\n{pick}\nfor it, x in enumerate(loader):\n    trainer.gen_update(x, 8)\n"
    (project / "train.py").write_text(script.format(pick=picks[pick]))
    expected = [("trainers.py", "ML013", 5)] if pick in ("chain", "expression") else []
    assert _findings(".", "--select", "ML013") == expected


CODERS = """
import torch
from torch import nn

class Coder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)

    def encode(self, x):
        return self.enc(x)

class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen_a = Coder()
        self.gen_b = Coder()

class Table:
    def __init__(self):
        self.gen_a = {}
        self.gen_b = {}

    def eval(self):
        pass
"""


@pytest.mark.parametrize("built", ["Pair", "Table"])
def test_an_imported_model_class_put_in_eval_mode_by_a_script(project, built):
    """NVlabs/MUNIT's test_batch.py (issue 27): `trainer = MUNIT_Trainer(config)`, a class of trainer.py
    extending nn.Module, then `trainer.eval()` and `encode = trainer.gen_a.encode if a2b else
    trainer.gen_b.encode` run per batch with gradients on.  A class of the project that is no
    nn.Module (`Table`, with an `eval` of its own) opens no evaluation region."""
    write(project / "coders.py", CODERS)
    write(project / "test.py", f"""
        import torch
        from coders import {built}

        trainer = {built}()
        trainer.eval()
        encode = trainer.gen_a.encode if a2b else trainer.gen_b.encode
        for x in loader:
            codes = encode(x)
            print(codes.mean().item())
    """)
    expected = [("test.py", "ML002", 8)] if built == "Pair" else []
    assert _findings(".", "--select", "ML002") == expected


def test_a_files_gradient_methods_name_the_project_methods_that_may_compute_gradients():
    # FileView.gradient_methods: a method of another file taking `torch.autograd.grad` (a PGD
    # attack's `perturb_sample`) is named; one only running its model (`encode`) is not.  ML002 reads
    # no evaluation in `self.attack.perturb_sample(x, y)` after `self.eval()`
    import textwrap
    from pathlib import Path

    from memlint.analysis.summaries import summarize
    from memlint.pipeline.project import Project
    from memlint.prescreen import Source

    files = {
        "attacks.py": textwrap.dedent("""
            import torch
            from torch import nn

            class Attack(nn.Module):
                def __init__(self, net):
                    super().__init__()
                    self.net = net

                def perturb_sample(self, x, y):
                    d = torch.zeros_like(x, requires_grad=True)
                    g, = torch.autograd.grad(self.net(x + d).sum(), [d])
                    return (x + g.sign()).detach()

                def encode(self, x):
                    return self.net(x)
        """),
        "trainer.py": textwrap.dedent("""
            import torch
            from torch import nn
            from attacks import Attack

            class Trainer(nn.Module):
                def __init__(self, net):
                    super().__init__()
                    self.attack = Attack(net)

                def adversarial(self, x, y):
                    self.eval()
                    x_adv = self.attack.perturb_sample(x, y)
                    z = self.attack.encode(x)
                    self.train()
                    return x_adv, z
        """),
    }
    project = Project([(Path(name), name, summarize(Source(text))) for name, text in files.items()])
    view = project.view(1)
    assert "perturb_sample" in view.gradient_methods and "encode" not in view.gradient_methods
    assert type(view).from_data(view.to_data()) == view


_CHAIN_MAIN = """
    import torch
    import torch.nn as nn
    from trainer import train_step

    model = nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in [torch.randn(4, 8) for _ in range(10)]:
        train_step(model, opt, x)
"""

_CHAIN_TRAINER = """
    from helpers import forward

    def train_step(model, opt, x):
        opt.zero_grad()
        loss = forward(model, x)
        loss.backward()
        opt.step()
"""


def test_a_helper_file_that_names_the_cpu_puts_no_caller_on_an_accelerator(project):
    # two calls away, the helper's file names a device only to keep the work on the CPU
    write(project / "main.py", _CHAIN_MAIN)
    write(project / "trainer.py", _CHAIN_TRAINER)
    write(project / "helpers.py", """
        import torch

        CPU = torch.device("cpu")

        def forward(model, x):
            return model(x.to(CPU)).pow(2).mean()
    """)
    assert _findings(".", "--select", "ML017") == []


def test_a_helper_file_that_mentions_a_gpu_in_a_comment_puts_no_caller_on_an_accelerator(project):
    write(project / "main.py", _CHAIN_MAIN)
    write(project / "trainer.py", _CHAIN_TRAINER)
    write(project / "helpers.py", """
        def forward(model, x):
            # later: gpu support
            return model(x).pow(2).mean()
    """)
    assert _findings(".", "--select", "ML017") == []


def test_a_helper_file_that_moves_work_to_the_device_puts_its_callers_there(project):
    # the same chain, the helper moving the batch `.to(device)`: the training runs there
    write(project / "main.py", _CHAIN_MAIN)
    write(project / "trainer.py", _CHAIN_TRAINER)
    write(project / "helpers.py", """
        import torch

        device = torch.device("cuda")

        def forward(model, x):
            return model(x.to(device)).pow(2).mean()
    """)
    assert _findings(".", "--select", "ML017") == [("main.py", "ML017", 7)]


def test_places_is_code_that_puts_work_on_an_accelerator():
    from memlint.analysis.summaries import summarize
    from memlint.prescreen import Source

    def places(text: str) -> bool:
        return summarize(Source(textwrap.dedent(text))).get("places") is True

    assert places("x = y.cuda()\n")
    assert places("x = y.to(self.device)\n")
    assert places("self.x = data['x'].to(self.device)\n")
    assert places("d = torch.device('cuda' if ok else 'cpu')\n")
    assert places("x = torch.zeros(3, device='cuda:0')\n")
    assert not places("CPU = torch.device('cpu')\nx = y.to(CPU)\n")
    assert not places("# gpu support later\nx = y + 1\n")
    assert not places("x = y.to(torch.float16)\n")


_PLACEHOLDER_CHAIN = """
    import torch

    class Engine:
        def __init__(self, loader, model, optimizer):
            self.loader = loader
            self.model = model.cuda()
            self.optimizer = optimizer

        def run(self):
            for data in self.loader:
                self.forward_backward(data)

        def forward_backward(self, data):
            raise NotImplementedError

    class Softmax(Engine):
        def forward_backward(self, data):
            loss = self.model(data.cuda()).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    class Staged(Softmax):
        def forward_backward(self, data):
            raise NotImplementedError

    class Last(Staged):
        def forward_backward(self, data):
            LAST
"""


def test_a_placeholder_does_what_every_override_below_it_does_through_placeholders_between(project):
    # Engine's placeholder: Softmax's override and Last's, below the placeholder of Staged; where
    # Last's only scores, the loop may train nothing
    training = "loss = self.model(data.cuda()).mean()\n            loss.backward()\n            self.optimizer.step()"
    write(project / "engine.py", _PLACEHOLDER_CHAIN.replace("LAST", training))
    assert _findings(".", "--select", "ML017") == [("engine.py", "ML017", 10)]
    write(project / "engine.py", _PLACEHOLDER_CHAIN.replace("LAST", "with torch.no_grad():\n                self.model(data.cuda())"))
    assert _findings(".", "--select", "ML017") == []


# ---------------------------------------------------------------------------- another framework's code

PADDLE_EVALUATE = """
import paddle
from nets import Net

def evaluate(loader):
    net = Net()
    net.eval()
    correct = 0
    for x, y in loader:
        correct += (net(x).argmax(1) == y).sum().item()
    return correct
# (written after the torch version: torch.no_grad has no say here)
"""


def test_a_file_of_another_framework_that_brings_no_torch_in_is_not_linted(project):
    write(project / "nets.py", "import paddle\nclass Net(paddle.nn.Layer):\n    pass\n")
    write(project / "evaluation.py", PADDLE_EVALUATE)
    assert _findings(".") == []


def test_a_file_of_another_framework_that_imports_a_torch_module_of_the_project_stays_pytorch(project):
    write(project / "nets.py", "import torch\nclass Net(torch.nn.Module):\n    pass\n")
    write(project / "evaluation.py", PADDLE_EVALUATE)
    assert ("evaluation.py", "ML002", 9) in _findings(".")


def test_a_script_of_another_framework_imports_the_module_beside_it(project):
    # paddle/head.py beside the script wins over the torch head.py of the folder above
    write(project / "head.py", "import torch\nclass Net(torch.nn.Module):\n    pass\n")
    write(project / "paddle_port" / "__init__.py", "")
    write(project / "paddle_port" / "nets.py", "import paddle\nclass Net(paddle.nn.Layer):\n    pass\n")
    write(project / "paddle_port" / "evaluation.py", PADDLE_EVALUATE)
    assert [f for f in _findings(".") if "paddle_port" in f[0]] == []


def test_a_file_importing_torch_and_another_framework_stays_pytorch(project):
    write(project / "nets.py", "import paddle\nclass Net(paddle.nn.Layer):\n    pass\n")
    write(project / "evaluation.py", "import torch\n" + PADDLE_EVALUATE)
    assert ("evaluation.py", "ML002", 11) in _findings(".")


def test_a_file_of_another_framework_whose_import_is_not_resolved_stays_pytorch(project):
    # `nets` is not in the project (a file linted alone, a notebook): it may be torch code
    write(project / "evaluation.py", PADDLE_EVALUATE)
    assert ("evaluation.py", "ML002", 9) in _findings(".")


def test_a_file_of_another_framework_importing_an_unknown_library_stays_pytorch(project):
    write(project / "nets.py", "import paddle\nclass Net(paddle.nn.Layer):\n    pass\n")
    write(project / "evaluation.py", "import somelib\n" + PADDLE_EVALUATE)
    assert ("evaluation.py", "ML002", 11) in _findings(".")


def test_a_file_of_another_framework_importing_a_src_layout_package_stays_pytorch(project):
    # scripts/ finds src/pkg only once installed: a loose match is no resolution
    write(project / "src" / "pkg" / "__init__.py", "")
    write(project / "src" / "pkg" / "nets.py", "import paddle\nclass Net(paddle.nn.Layer):\n    pass\n")
    write(project / "scripts" / "evaluation.py", PADDLE_EVALUATE.replace("from nets import", "from pkg.nets import"))
    assert ("scripts/evaluation.py", "ML002", 9) in _findings(".")


def test_a_module_of_another_framework_whose_helper_imports_an_unknown_library_stays_pytorch(project):
    write(project / "nets.py", "import paddle\nimport somelib\nclass Net(paddle.nn.Layer):\n    pass\n")
    write(project / "evaluation.py", PADDLE_EVALUATE)
    assert ("evaluation.py", "ML002", 9) in _findings(".")


def test_a_summary_with_every_optional_file_fact_is_valid_as_stored():
    # A summary whose top-level facts `_check_summary` does not know is thrown away as damaged when
    # read back from the cache (each file summarised again on every run): every optional fact a
    # file can carry must pass the check, here all at once.
    from memlint.analysis.summaries import is_valid, summarize
    from memlint.prescreen import Source

    text = textwrap.dedent("""
        import paddle
        import torch.nn as nn
        from models import *
        from helpers import Net
        from learners import LEARNERS

        x = y.cuda()

        def build():
            class Inner(Net):
                pass
            return Inner()

        class Policy:
            pass

        MODELS = {}
        MODELS["policy"] = Policy
        LEARNERS["policy"] = Policy
    """)
    summary = summarize(Source(text))
    optional = {"stars", "places", "inner", "deep", "registries", "fills"}
    assert optional <= set(summary), optional - set(summary)
    assert is_valid(summary)


_REGISTRY_LEARNERS = """
    import torch
    import torch.nn as nn

    class ValueLearner:
        def __init__(self, args):
            self.net = nn.Linear(8, 4).cuda()
            self.optimiser = torch.optim.Adam(self.net.parameters())

        def train(self, batch):
            self.optimiser.zero_grad()
            self.net(batch).mean().backward()
            self.optimiser.step()

    class PolicyLearner:
        def __init__(self, args):
            self.net = nn.Linear(8, 4).cuda()
            self.optimiser = torch.optim.SGD(self.net.parameters(), lr=0.1)

        def train(self, batch):
            self.optimiser.zero_grad()
            (-self.net(batch).mean()).backward()
            self.optimiser.step()
"""
_REGISTRY_MAIN = """
    from learners import REGISTRY as learner_registry

    def run(args, buffer):
        learner = learner_registry[args.learner](args)
        for batch in buffer:
            learner.train(batch)
"""


def test_a_method_of_an_instance_built_from_a_registry_dict_is_every_entrys(project):
    # oxwhirl/pymarl: `learners/__init__.py` fills `REGISTRY = {}` with `REGISTRY["q_learner"] =
    # QLearner`, ...; `le_REGISTRY[args.learner](...)` builds one of them, and every one's `train`
    # runs its net, backpropagates and steps
    write(project / "learners" / "learning.py", _REGISTRY_LEARNERS)
    write(project / "learners" / "__init__.py", """
        from .learning import ValueLearner, PolicyLearner

        REGISTRY = {}
        REGISTRY["value"] = ValueLearner
        REGISTRY["policy"] = PolicyLearner
    """)
    write(project / "main.py", _REGISTRY_MAIN)
    assert _findings(".", "--select", "ML017") == [("main.py", "ML017", 5)]


@pytest.mark.parametrize(
    "registry, other",
    [
        # an entry that is no class of the project: what it builds is not known
        ('REGISTRY = {"value": ValueLearner, "policy": PolicyLearner, "other": dict}\n', None),
        # another file adds an entry: the registry's file does not show every class it holds
        ('REGISTRY = {"value": ValueLearner, "policy": PolicyLearner}\n', 'from learners import REGISTRY\nREGISTRY["extra"] = dict\n'),
        # handed on: whoever is handed it may fill it
        ('REGISTRY = {"value": ValueLearner, "policy": PolicyLearner}\nsetup(REGISTRY)\n', None),
        # another file fills it through its module, or by `|=`, or hands the imported dict on: any use
        # but reading an entry drops the registry
        ('REGISTRY = {"value": ValueLearner, "policy": PolicyLearner}\n', 'import learners\nlearners.REGISTRY["extra"] = dict\n'),
        ('REGISTRY = {"value": ValueLearner, "policy": PolicyLearner}\n', 'import learners as L\nL.REGISTRY.update(extra=dict)\n'),
        ('REGISTRY = {"value": ValueLearner, "policy": PolicyLearner}\n', 'from learners import REGISTRY\nREGISTRY |= {"extra": dict}\n'),
        (
            'REGISTRY = {"value": ValueLearner, "policy": PolicyLearner}\n',
            'from learners import REGISTRY\ndef add(table, name, cls):\n    table[name] = cls\nadd(REGISTRY, "extra", dict)\n',
        ),
    ],
)
def test_a_registry_dict_whose_entries_are_not_all_known_builds_nothing_known(project, registry, other):
    write(project / "learners" / "learning.py", _REGISTRY_LEARNERS)
    write(project / "learners" / "__init__.py", "from .learning import ValueLearner, PolicyLearner, setup\n" + registry)
    if other is not None:
        write(project / "plugins.py", other)
    write(project / "main.py", _REGISTRY_MAIN)
    assert _findings(".", "--select", "ML017") == []


# ---------------------------------------------------------------------------- a helper returning its argument's history

NORMS = """
import torch

def l2_norm(v, axis=1):
    norm = torch.norm(v, 2, axis, True)
    return torch.div(v, norm)

def as_numbers(v):
    return v.detach().cpu().numpy()

def scaled(v, k):
    if k:
        return v * k
    return v.item()

def quiet(v):
    with torch.no_grad():
        out = v * 2
    return out
"""


def test_a_helper_of_another_file_that_returns_its_arguments_history_passes_it_on(project):
    write(project / "norms.py", NORMS)
    write(project / "infer.py", """
        import torch
        from norms import l2_norm, as_numbers, scaled, quiet

        def evaluate(model, loader):
            kept, numbers, mixed, frozen, detached = [], [], [], [], []
            for x, _ in loader:
                out = model(x)
                kept.append(l2_norm(out + out))
                numbers.append(as_numbers(out))
                mixed.append(scaled(out, 2))
                frozen.append(quiet(out))
                detached.append(l2_norm(out.detach()))
            return kept, numbers, mixed, frozen, detached
    """)
    # only the helper whose every return keeps its argument's history passes it on, and only
    # where the argument carries some
    assert [f for f in _findings(".") if f[1] == "ML001"] == [("infer.py", "ML001", 8)]


def test_the_summary_marks_a_parameter_whose_history_the_return_carries():
    from memlint.analysis.summaries import summarize
    from memlint.prescreen.source import Source

    summary = summarize(Source(NORMS))
    functions = summary["functions"]
    assert functions["l2_norm"]["returns"] == [[["g", 0], ["g", 1]]]  # (`torch.norm(v, 2, axis, True)` reads axis too)
    assert "returns" not in functions["as_numbers"]
    assert "returns" not in functions["scaled"]  # one return is a number
    assert "returns" not in functions["quiet"]


# ---------------------------------------------------------------------------- the review of the history-through fact

ENDINGS = """
import torch

def labels(scores):
    _, best = torch.max(scores, 1)
    return best

def second(scores):
    return torch.max(scores, 1)[1]

def top(scores):
    return torch.topk(scores, 3).indices

def order(scores):
    _, ranked = torch.sort(scores, descending=True)
    return ranked

def draw(probs):
    return torch.multinomial(probs, 1)

def as_bytes(images):
    return (images * 255).to(torch.uint8)

def same(a, b):
    return torch.equal(a, b)

def maybe(v, flag):
    if flag:
        return v * 2

def switched(v, train=False):
    with torch.set_grad_enabled(train):
        out = torch.div(v, v.norm(2, 1, True))
    return out

def either(v, flag):
    if flag:
        return v * 2
    else:
        return v / 2
"""


def test_a_helper_whose_return_ends_its_arguments_history_is_not_marked():
    from memlint.analysis.summaries import summarize
    from memlint.prescreen.source import Source

    functions = summarize(Source(ENDINGS))["functions"]
    for name in ("labels", "second", "top", "order", "draw", "as_bytes", "same", "maybe", "switched"):
        assert not any(
            a is not True and a[0] == "g" for alternatives in functions[name].get("returns") or () for a in alternatives
        ), name
    assert functions["either"]["returns"] == [[["g", 0]], [["g", 0]]]  # an if/else whose every arm returns


def test_no_history_through_helpers_that_end_it_or_a_name_two_star_imports_define(project):
    write(project / "ends.py", ENDINGS)
    write(project / "first.py", """
        import torch
        def l2_norm(v):
            return torch.div(v, v.norm(2, 1, True))
    """)
    write(project / "second.py", """
        import torch
        def l2_norm(v):
            return v.detach()
    """)
    write(project / "infer.py", """
        import torch
        from ends import labels, second, top, order, draw, as_bytes, same, maybe, switched
        from first import *
        from second import *

        def evaluate(model, loader, ref):
            a, b, c, d, e, f, g, h, i, j = [], [], [], [], [], [], [], [], [], []
            for x, _ in loader:
                out = model(x)
                a.append(labels(out))
                b.append(second(out))
                c.append(top(out))
                d.append(order(out))
                e.append(draw(out))
                f.append(as_bytes(out))
                g.append(same(out, ref))
                h.append(maybe(out, False))
                i.append(switched(out))
                j.append(l2_norm(out))
            return a, b, c, d, e, f, g, h, i, j
    """)
    assert [f for f in _findings(".") if f[1] == "ML001"] == []


def test_a_helper_of_many_returns_asks_its_parameter_once(monkeypatch):
    # The parameter-history fact is one answer per (function, parameter): a helper with 1,500
    # returns of its parameter asks whether the parameter is bound again once, not once per return
    # (each asking scans the file's bindings of the name: quadratic on such a file). Counted, not
    # timed, so that a slow machine cannot fail it and a fast one cannot hide the regression.
    from memlint.analysis import summaries
    from memlint.prescreen.source import Source

    asked = []
    original = summaries.rebound

    def counting(function, name, bindings):
        asked.append(name)
        return original(function, name, bindings)

    monkeypatch.setattr(summaries, "rebound", counting)
    returns = "".join(f"    if k == {i}:\n        return torch.maximum(x, x * {i})\n" for i in range(1500))
    text = f"import torch\ndef h(x, k):\n{returns}    return x\n"
    summary = summaries.summarize(Source(text))
    assert asked.count("x") == 1
    assert summary["functions"]["h"]["returns"][0] == [["g", 0]]


WRAPPER = """
    import torch
    from torch import nn

    class Retrieval(object):
        def __init__(self):
            self.img_enc = nn.Linear(8, 4)
            self.txt_enc = nn.Linear(8, 4)

        def start_training(self):
            self.img_enc.train()
            self.txt_enc.train()

        def start_validation(self):
            '''Both encoders to evaluation mode.'''
            {validation}

        def embed_pair(self, images, captions):
            return self.img_enc(images), self.txt_enc(captions)
"""


@pytest.mark.parametrize("validation", ["self.img_enc.eval()\n            self.txt_enc.eval()", "self.img_enc.eval()\n            self.txt_enc.train()", "self.img_enc.eval()\n            self.seen = 0"])
@pytest.mark.parametrize("between", ["", "model.start_training()"])
def test_a_method_of_another_files_class_that_puts_its_encoders_in_eval_mode(project, validation, between):
    """kuanghuei/SCAN (issue 27): `model.val_start()`, a method of a plain class of model.py whose body
    only calls `self.img_enc.eval()` and `self.txt_enc.eval()`, then `model.forward_emb(...)` per batch
    with gradients on.  A body that also trains a model, or does anything else, is no such method;
    the holder's method that trains them (`start_training`) ends the region."""
    write(project / "model.py", WRAPPER.format(validation=validation))
    write(project / "evaluation.py", f"""
        import numpy as np
        import torch

        def encode_data(model, loader):
            model.start_validation()
            {between}
            found = []
            for images, captions in loader:
                img, cap = model.embed_pair(images, captions)
                found.append(img.detach().cpu().numpy())
            return np.concatenate(found)
    """)
    write(project / "train.py", """
        from model import Retrieval
        from evaluation import encode_data

        def main(loader):
            model = Retrieval()
            model.start_training()
            return encode_data(model, loader)
    """)
    found = [f for f in _findings(".") if f[1] == "ML002"]
    expected = [("evaluation.py", "ML002", 9)] if validation.endswith("txt_enc.eval()") and not between else []
    assert found == expected


def test_summaries_record_the_mode_a_method_sets():
    from memlint.analysis.summaries import summarize
    from memlint.prescreen import Source

    summary = summarize(Source(textwrap.dedent(WRAPPER.format(validation="self.img_enc.eval()\n            self.txt_enc.eval()"))))
    functions = summary["functions"]
    assert functions["Retrieval.start_validation"]["mode"] == "eval"
    assert functions["Retrieval.start_training"]["mode"] == "train"
    assert "mode" not in functions["Retrieval.embed_pair"]
    other = summarize(Source(textwrap.dedent(WRAPPER.format(validation="if self.img_enc:\n                self.img_enc.eval()"))))
    assert "mode" not in other["functions"]["Retrieval.start_validation"]  # (a conditional switch is no certain one)


HOLDER = """
    import torch
    from torch import nn

    class Holder(object):
        def __init__(self):
            self.enc = nn.Linear(8, 8)
            self.head = nn.Linear(8, 2)
            self.criterion = nn.MSELoss()
            self.opt = torch.optim.SGD(self.head.parameters(), lr=0.1)

        def quiet_both(self):
            self.enc.eval()
            self.head.eval()

        def quiet_encoder(self):
            self.enc.eval()

        async def quiet_later(self):
            self.enc.eval()
            self.head.eval()

        def wake(self):
            self._set(True)

        def _set(self, flag):
            for part in (self.enc, self.head):
                part.train(flag)

        def embed(self, x):
            return self.head(self.enc(x))

        def loss(self, x, y):
            return self.criterion(self.embed(x), y)
"""


def test_summaries_give_eval_mode_only_to_a_method_evaluating_every_held_model():
    """Issue 27 (review of SCAN's `val_start`): a wrapper stands for `model.eval()` only where it evals
    every model its class holds (a loss, `self.criterion`, is none); never an `async def`; a method
    that trains through another method of its class (`self._set(True)`) has mode "train"."""
    from memlint.analysis.summaries import summarize
    from memlint.prescreen import Source

    functions = summarize(Source(textwrap.dedent(HOLDER)))["functions"]
    assert functions["Holder.quiet_both"]["mode"] == "eval"
    assert "mode" not in functions["Holder.quiet_encoder"]
    assert "mode" not in functions.get("Holder.quiet_later", {})
    assert functions["Holder.wake"]["mode"] == "train"
    assert functions["Holder._set"]["mode"] == "train"


def test_a_wrapper_region_in_a_function_that_calls_a_backpropagating_method_is_no_evaluation(project):
    """Issue 27: after `holder.quiet_both()`, a loop whose outputs go to `trainer.update(...)`, a
    method that runs backward, is training (a frozen part of a larger model): silent; without that
    call the same loop is evaluation."""
    write(project / "model.py", HOLDER)
    write(project / "run.py", """
        from model import Holder

        class Trainer:
            def __init__(self, opt):
                self.opt = opt

            def update(self, loss):
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()

        def fit(model, loader, trainer):
            model.quiet_both()
            for x, y in loader:
                trainer.update((model.embed(x) - y).pow(2).mean())

        def score(model, loader):
            model.quiet_both()
            total = 0.0
            for x, y in loader:
                total += model.embed(x).sum().item()
            return total
    """)
    found = [f for f in _findings(".") if f[1] == "ML002"]
    assert found == [("run.py", "ML002", 21)]


def test_a_method_a_subclass_of_another_file_overrides_is_no_fresh_helper(project):
    # `self.band(n)` of the base class may reach the subclass's own `band`, which gives back a kept
    # tensor: the call is no host helper's, whatever the base class's body makes
    write(project / "base.py", """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def band(self, n):
                return torch.ones(n, n).triu()

            def forward(self, x):
                return x @ self.band(x.shape[-1]).to(x.device)
    """)
    write(project / "kept.py", """
        from base import Head

        class KeptHead(Head):
            def band(self, n):
                return self.bands[n]
    """)
    assert _findings(".") == []
    assert _findings("base.py") == [("base.py", "ML013", 9)]  # alone, base.py knows no override
