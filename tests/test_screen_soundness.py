"""The screens never lose a finding.

A rule's screen (the trigger words of its meta.py and its screen.py) must hold on every file the
rule reports in, and so must the "mentions torch" prefilter.  Every VALID / INVALID example of
every rule, every fixture and a slice of generated programs is linted with every rule twice: by
the full analysis alone (`checker.check_text`) and as `memlint check` does it, behind the
prefilter and the screens (`engine.lint_text`).  A finding the first gives and the second does
not fails the test, naming the rule; so does a finding of a rule whose own screen clears the
file (another rule's screen may have let the file through, hiding the fault from the first
comparison).  bench/prescreen_check.py asks the same on the downloaded corpora.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Mapping

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz_generated import programs

from memlint.analysis.summaries import summarize
from memlint.config import Selection, Settings, build_settings, discover, validate
from memlint.pipeline.checker import check_text
from memlint.pipeline.engine import lint_text
from memlint.pipeline.project import Project, single_file_view
from memlint.pipeline.registry import RESERVED_CODES, all_rules, builtin_rules, rule_options
from memlint.prescreen import Source, screen_holds
from memlint.rule import SELECTED_BY_CODE
from memlint.testing import source_of

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BUILT_IN = frozenset(builtin.meta.code for builtin in builtin_rules())
DEFAULTS = {option.key: option.default for option in rule_options()}
# ML006 reports only against a budget: a small one lets it report wherever it can.
GENEROUS = {**DEFAULTS, "gpu-memory": 1 << 20}


def every_rule(options: Mapping[str, Any]) -> Settings:
    """Every rule, each as selected by its exact code: every site it can report (ML003's included)."""
    return Settings(enabled=BUILT_IN, options={**options, SELECTED_BY_CODE: sorted(BUILT_IN)})


def by_default(options: Mapping[str, Any]) -> Settings:
    """Every rule, none selected by its exact code: the sites a rule reports only by default
    (ML003's functional activations in a forward-only pass) take their screens' other paths."""
    return Settings(enabled=BUILT_IN, options=dict(options))


def lost_findings(text: str, settings: Settings, project=None, filename: str = "probe.py") -> list[str]:
    """What the prefilter and the screens would hide, one line per finding, naming its rule.
    `project`: the file's project facts (memlint/pipeline/project.py); by default, the file alone's, as
    `memlint check` gives a file linted alone."""
    source = Source(text)
    if project is None and source.tree is not None:
        project = single_file_view(summarize(source), filename)
    full = [d for d in check_text(text, filename, settings, project=project) if d.code not in RESERVED_CODES]
    screened = lint_text(text, filename, settings, project)
    lost = [f"{d.code} ({d.name}) at {d.location.row}:{d.location.column} appears only without screens" for d in full if d not in screened]
    source.project = project
    if "torch" in text and source.tree is not None:
        for code in sorted({d.code for d in full}):
            if not screen_holds(source, code, settings.options):
                lost.append(f"{code}: its screen clears a file it reports in")
    return lost


def _failure(lost: list[str], text: str) -> str:
    return "\n".join(lost) + "\n--- program ---\n" + text


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_no_finding_of_an_example_is_lost_to_the_screens(rule):
    for kind, examples in (("VALID", rule.VALID), ("INVALID", rule.INVALID)):
        for index, example in enumerate(examples):
            options = {**DEFAULTS, **validate(dict(example.config), f"{rule.code} example config")}
            text = source_of(example)
            for selection in (every_rule, by_default):
                lost = lost_findings(text, selection(options))
                assert not lost, f"{rule.code} {kind}[{index}] ({selection.__name__}): " + _failure(lost, text)


# Sites a rule reports by default and its screen must let through outside exact selection: ML003's
# functional activation where the framework runs the method with gradients off (a Lightning hook,
# a Hugging Face Pipeline's `_forward`), on a fresh value (a product, `torch.cat`, a matrix product).
DEFAULT_SELECTION_PROGRAMS = {
    "validation_step on a product": (
        "import torch\nimport torch.nn.functional as F\nimport pytorch_lightning as pl\n"
        "class M(pl.LightningModule):\n    def validation_step(self, batch, idx):\n"
        "        a, b = batch\n        h = a * b\n        return F.relu(h)\n"
    ),
    "Pipeline._forward on a matrix product": (
        "import torch\nimport torch.nn.functional as F\nfrom transformers import Pipeline\n"
        "class P(Pipeline):\n    def _forward(self, x):\n        return F.relu(x @ self.w)\n"
    ),
    "on_validation_ hook on torch.cat": (
        "import torch\nimport torch.nn.functional as F\nclass M(torch.nn.Module):\n"
        "    def on_validation_batch_end(self, a, b):\n        out = F.relu(torch.cat([a, b]))\n        return out\n"
    ),
}


@pytest.mark.parametrize("name", sorted(DEFAULT_SELECTION_PROGRAMS))
def test_no_finding_of_the_default_selection_is_lost_to_the_screens(name):
    text = DEFAULT_SELECTION_PROGRAMS[name]
    assert any(d.code == "ML003" for d in check_text(text, "probe.py", by_default(DEFAULTS))), "the program tests nothing"
    lost = lost_findings(text, by_default(DEFAULTS))
    assert not lost, _failure(lost, text)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.py")), ids=lambda path: path.name)
def test_no_finding_of_a_fixture_is_lost_to_the_screens(path):
    configured = build_settings(discover(FIXTURES), Selection(select=sorted(BUILT_IN)))
    text = path.read_text(encoding="utf-8")
    lost = lost_findings(text, every_rule(configured.options))
    assert not lost, _failure(lost, text)


# Programs made of the rules' own examples, two or three at a time, at the top of a module or
# inside a function: each example's findings meet the others' names, imports and loops.
SNIPPETS = [source_of(e) for rule in all_rules() for e in [*rule.VALID, *rule.INVALID] if not e.config]


def _place(parts: list[str], where: str) -> str:
    text = "\n".join(parts)
    if where == "function":
        return "def run(model, loader, optimizer):\n" + textwrap.indent(text, "    ")
    return text


mixed_examples = st.builds(_place, st.lists(st.sampled_from(SNIPPETS), min_size=2, max_size=3), st.sampled_from(["top", "function"]))

GENERATED = settings(
    max_examples=80,
    derandomize=True,  # the same programs on every run
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@GENERATED
@given(mixed_examples)
def test_no_finding_of_mixed_examples_is_lost_to_the_screens(text):
    lost = lost_findings(text, every_rule(GENEROUS))
    assert not lost, _failure(lost, text)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@GENERATED
@given(programs)
def test_no_finding_of_generated_programs_is_lost_to_the_screens(text):
    lost = lost_findings(text, every_rule(GENEROUS))
    assert not lost, _failure(lost, text)


def test_a_screen_that_drops_a_finding_is_named(monkeypatch):
    """The comparison can fail: with ML004's screen made to say no, its example's finding is lost."""
    import memlint.prescreen as prescreen

    screen = prescreen._screen
    monkeypatch.setattr(prescreen, "_screen", lambda code: (lambda source, options: False) if code == "ML004" else screen(code))
    (rule,) = [r for r in all_rules() if r.code == "ML004"]
    lost = lost_findings(source_of(rule.INVALID[0]), every_rule(DEFAULTS))
    assert any(line.startswith("ML004 (retained-intermediates) at ") for line in lost), lost
    assert "ML004: its screen clears a file it reports in" in lost


# ---------------------------------------------------------------------------- across files
# The project pass (memlint/pipeline/project.py) gives a file facts from the other files linted with it: a
# helper elsewhere returns a loss, a base class elsewhere is an nn.Module.  A screen must answer
# "maybe" wherever those facts can make its rule report.  Projects of two or three files, written
# out and generated: helpers from HELPER_BODIES, used by the rules' own examples.

HELPER_BODIES = [
    "def compute_loss(model, x, y):\n    return criterion(model(x), y)\n",
    "def forward_batch(net, batch):\n    out = net(batch)\n    return out\n",
    "def score(model, x):\n    return model(x).sum().item()\n",
    "def step(model, x):\n    return torch.nn.functional.mse_loss(model(x), x)\n",
    "def free_memory():\n    torch.cuda.empty_cache()\n",
    "def cleanup():\n    gc.collect()\n",
    "def evaluate(model, loader):\n    model.eval()\n    return [model(x) for x in loader]\n",
    "def predict(model, x):\n    return model(x).softmax(-1)\n",
    "class Base(nn.Module):\n    def shared_step(self, batch):\n        return self(batch).mean()\n",
]
HELPER_NAMES = ["compute_loss", "forward_batch", "score", "step", "free_memory", "cleanup", "evaluate", "predict", "Base"]
USES = [
    "total = 0.0\nfor x, y in loader:\n    total += {name}(model, x, y)\n",
    "outs = []\nfor batch in val_loader:\n    outs.append({name}(model, batch))\n",
    "for x in train_loader:\n    loss = {name}(model, x)\n    loss.backward()\n    optimizer.step()\n    {name}()\n",
    "with torch.no_grad():\n    {name}(model, val_loader)\n",
    "class Net({name}):\n    def validate_epoch(self, loader):\n        self.eval()\n        losses = []\n        for b in loader:\n            losses.append(self.shared_step(b))\n        return self(b)\n",
]

PROJECTS = {
    "helper returns a loss": {
        "losses.py": "import torch\n" + HELPER_BODIES[0],
        "train.py": "import torch\nfrom losses import compute_loss\n" + USES[0].format(name="compute_loss"),
    },
    "module base elsewhere": {
        "base.py": "import torch\nfrom torch import nn\n" + HELPER_BODIES[-1],
        "net.py": "import torch\nfrom base import Base\n" + USES[4].format(name="Base"),
    },
    "host tensor made by another file's helper": {  # train.py mentions no torch factory: ML013's screen asks the view
        "masks.py": "import torch\ndef causal_mask(n):\n    mask = torch.triu(torch.ones(1, n, n), diagonal=1).type(torch.int)\n    return mask == 0\n",
        "train.py": "import torch\nfrom masks import causal_mask\nfor x in train_loader:\n    m = causal_mask(x.size(1)).to(device)\n    model(x, m).backward()\n",
    },
    "unsaved tensor returned by another file's helper": {  # `normalise` is no torch name: ML003's screen asks the view
        "norms.py": "import torch.nn.functional as F\ndef normalise(x, w):\n    return F.batch_norm(x, None, None, weight=w, training=True)\n",
        "model.py": "import torch.nn.functional as F\nfrom norms import normalise\ndef head(x, w):\n    return F.relu(normalise(x, w))\n",
    },
    "flush through two helpers": {
        "helpers.py": "import torch\n" + HELPER_BODIES[4],
        "steps.py": "import torch\nimport helpers\ndef after_step(model):\n    helpers.free_memory()\n",
        "train.py": "import torch\nfrom steps import after_step\nfor b in train_loader:\n    model(b).sum().backward()\n    after_step(model)\n",
    },
}


def lost_in_project(files: dict[str, str], options: Mapping[str, Any]) -> list[str]:
    paths = [Path(name) for name in files]
    sources = {name: Source(text) for name, text in files.items()}
    project = Project([(path, name, summarize(sources[name]) if sources[name].tree is not None else None) for path, name in zip(paths, files)])
    lost = []
    for index, (name, text) in enumerate(files.items()):
        lost += [f"{name}: {line}" for line in lost_findings(text, every_rule(options), project.view(index), name)]
    return lost


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_no_finding_of_a_project_is_lost_to_the_screens(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # module names come from the directories around the files
    files = PROJECTS[name]
    lost = lost_in_project(files, GENEROUS)
    assert not lost, "\n".join(lost) + "".join(f"\n--- {n} ---\n{t}" for n, t in files.items())


def test_the_projects_have_findings_that_need_the_other_files(tmp_path, monkeypatch):
    """The projects above test something: each has a finding its files do not give alone."""
    monkeypatch.chdir(tmp_path)
    for name, files in PROJECTS.items():
        paths = [Path(n) for n in files]
        project = Project([(p, n, summarize(Source(t))) for p, n, t in zip(paths, files, files.values())])
        together = {(n, d.code, d.location.row) for i, (n, t) in enumerate(files.items()) for d in lint_text(t, n, every_rule(GENEROUS), project.view(i))}
        alone = {(n, d.code, d.location.row) for n, t in files.items() for d in lint_text(t, n, every_rule(GENEROUS))}
        assert together - alone, name


def _project(helpers: list[int], use: int, snippet: str) -> dict[str, str]:
    body = "".join(HELPER_BODIES[i] for i in sorted(set(helpers)))
    names = [HELPER_NAMES[i] for i in sorted(set(helpers))]
    uses = "".join(USES[use].format(name=n) for n in names)
    return {
        "helpers.py": "import gc\nimport torch\nfrom torch import nn\n" + body,
        "main.py": f"import torch\nfrom helpers import {', '.join(names)}\n" + snippet + "\n" + uses,
    }


projects = st.builds(
    _project, st.lists(st.integers(0, len(HELPER_BODIES) - 1), min_size=1, max_size=3),
    st.integers(0, len(USES) - 1), st.sampled_from(SNIPPETS),
)  # fmt: skip


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=40, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(projects)
def test_no_finding_of_generated_projects_is_lost_to_the_screens(files):
    lost = lost_in_project(files, GENEROUS)
    assert not lost, "\n".join(lost) + "".join(f"\n--- {n} ---\n{t}" for n, t in files.items())
