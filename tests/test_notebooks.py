"""Jupyter notebooks: linted across cells, findings located by cell, IPython syntax tolerated, and
fixes that change only the `source` of the fixed cells in the notebook's JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from integration_helpers import memlint

from memlint.pipeline.notebooks import mask_magics


def code(source: str, **extra) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": source.splitlines(keepends=True), **extra}  # fmt: skip


def markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source.splitlines(keepends=True)}


LOOP = """\
%%time
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    %timeit f()
    total += loss
print(total)"""

OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["ü 1.0\n"]}


def notebook() -> dict:
    return {
        "cells": [
            markdown("# Training\nSome notes."),
            code("import torch\nfrom torch import nn\n%matplotlib inline\n!pip install tqdm"),
            markdown("Model:"),
            code("model = nn.Linear(4, 2)\ncriterion = nn.MSELoss()\nfiles = !ls\nmodel?", execution_count=3),
            code("%%bash\nfor f in *; do echo $f; done"),
            code(LOOP, outputs=[OUTPUT], execution_count=5, metadata={"tags": ["slow"]}),
            code("# é\nprint('ü')"),
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def nbformat_text(nb: dict) -> str:
    # How Jupyter (nbformat) writes a notebook.
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.ipynb").write_text(nbformat_text(notebook()), encoding="utf-8")
    return tmp_path


def test_notebooks_are_discovered_and_findings_carry_the_cell(project: Path):
    result = memlint("check", "--output-format", "json", ".", cwd=project)
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)
    assert [(f["code"], f["cell"], f["location"], f["end_location"]) for f in findings] == [
        ("ML001", 6, {"row": 6, "column": 5}, {"row": 6, "column": 18}),
    ]
    full = memlint("check", ".", cwd=project).stdout
    assert "train.ipynb:cell 6:6:5: ML001" in full
    assert "6 |     total += loss" in full  # the frame shows the cell's own lines


def test_fix_rewrites_only_the_fixed_cell_and_keeps_the_json_byte_for_byte(project: Path):
    result = memlint("check", "--fix", "train.ipynb", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    expected = notebook()
    expected["cells"][5]["source"] = LOOP.replace("total += loss\n", "total += loss.item()\n").splitlines(keepends=True)
    assert (project / "train.ipynb").read_text(encoding="utf-8") == nbformat_text(expected)
    assert memlint("check", "--fix", "train.ipynb", cwd=project).returncode == 0  # nothing left to do


def test_other_json_layouts_are_kept(tmp_path: Path):
    nb = notebook()
    nb["cells"] = [{"source": "".join(c["source"]), **{k: v for k, v in c.items() if k != "source"}} for c in nb["cells"]]
    text = json.dumps(nb, indent=2, ensure_ascii=True)  # string sources, keys unsorted, no final newline
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    assert memlint("check", "--fix", "nb.ipynb", cwd=tmp_path).returncode == 0
    nb["cells"][5]["source"] = LOOP.replace("total += loss\n", "total += loss.item()\n")
    assert (tmp_path / "nb.ipynb").read_text(encoding="utf-8") == json.dumps(nb, indent=2, ensure_ascii=True)


def test_a_broken_cell_is_reported_and_the_others_still_linted(tmp_path: Path):
    nb = notebook()
    nb["cells"].insert(1, code("def broken(:\n    pass"))
    (tmp_path / "nb.ipynb").write_text(nbformat_text(nb), encoding="utf-8")
    findings = json.loads(memlint("check", "--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    assert [(f["code"], f["cell"], f["location"]["row"]) for f in findings] == [("ML000", 2, 1), ("ML001", 7, 6)]


INDENTED_LOOP = "    total = 0.0\n    for x, y in loader:\n        total += criterion(model(x), y)\n"


def test_a_cell_indented_as_a_whole_is_linted_as_ipython_runs_it(tmp_path: Path):
    # IPython removes the first line's indentation from every line before running a cell; the help
    # search `torch.*Tensor?` in another cell is IPython too: neither is a syntax error
    nb = notebook()
    nb["cells"][5] = code(INDENTED_LOOP)
    nb["cells"].insert(1, code("torch.*Tensor?"))
    (tmp_path / "nb.ipynb").write_text(nbformat_text(nb), encoding="utf-8")
    findings = json.loads(memlint("check", "--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    # the column is the cell's own (after its four spaces of indentation)
    assert [(f["code"], f["cell"], f["location"]) for f in findings] == [("ML001", 7, {"row": 3, "column": 9})]
    assert memlint("check", "--fix", "nb.ipynb", cwd=tmp_path).returncode == 0
    fixed = json.loads((tmp_path / "nb.ipynb").read_text(encoding="utf-8"))
    expected = INDENTED_LOOP.replace("total += criterion(model(x), y)", "total += criterion(model(x), y).item()")
    assert "".join(fixed["cells"][6]["source"]) == expected  # indented again, as it was written
    assert memlint("check", "nb.ipynb", cwd=tmp_path).returncode == 0


def test_a_cell_indented_unevenly_is_still_a_syntax_error(tmp_path: Path):
    nb = notebook()
    nb["cells"].insert(1, code("    x = 1\n  y = 2\n"))
    (tmp_path / "nb.ipynb").write_text(nbformat_text(nb), encoding="utf-8")
    findings = json.loads(memlint("check", "--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    assert [(f["code"], f["cell"]) for f in findings] == [("ML000", 2), ("ML001", 7)]


def test_invalid_notebook_json_is_a_clear_finding(tmp_path: Path):
    (tmp_path / "bad.ipynb").write_text("{not json", encoding="utf-8")
    result = memlint("check", "--output-format", "concise", "bad.ipynb", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "bad.ipynb:1:1: ML000 SyntaxError: notebook not valid JSON" in result.stdout


def test_notebook_on_stdin(project: Path):
    text = (project / "train.ipynb").read_text(encoding="utf-8")
    result = memlint("check", "--output-format", "json", "--stdin-filename", "x.ipynb", "-", cwd=project, input=text)
    assert [f["cell"] for f in json.loads(result.stdout)] == [6]


@pytest.mark.parametrize(
    "source",
    ["%timeit f()", "!pip install x", "files = !ls", "out = %sx ls", "model?", "?model", "model??", "torch.*Tensor?",
     "for i in x:\n    %time f(i)\n    !echo \\\n  done", "%%capture\nx = 1", "a, b = !ls"],
)  # fmt: skip
def test_ipython_syntax_is_masked_into_parseable_python(source: str):
    masked, magics = mask_magics(source)
    compile(masked, "<cell>", "exec")
    assert len(masked.splitlines()) == len(source.splitlines())
    assert magics


def test_cells_in_another_language_are_skipped():
    assert mask_magics("%%bash\nls") is None
    assert mask_magics("%%writefile x.py\nimport torch") is None


def test_add_noqa_in_a_notebook_edits_only_the_cell(project: Path):
    result = memlint("check", "--add-noqa", "train.ipynb", cwd=project)
    assert result.returncode == 0 and "Added 1 noqa directive." in result.stderr
    expected = notebook()
    expected["cells"][5]["source"] = LOOP.replace("total += loss\n", "total += loss  # noqa: ML001\n").splitlines(True)
    assert (project / "train.ipynb").read_text(encoding="utf-8") == nbformat_text(expected)
    assert memlint("check", "train.ipynb", cwd=project).returncode == 0


def test_code_a_fix_adds_above_the_first_cell_goes_into_that_cell():
    from memlint.pipeline.notebooks import _fixed_sources, _read

    nb = {"cells": [markdown("# t"), code("x = torch.zeros(1)\n%time f()")], "metadata": {}, "nbformat": 4,
          "nbformat_minor": 5}  # fmt: skip
    parsed = _read(json.dumps(nb), "a.ipynb")
    assert _fixed_sources(parsed, "import torch\n" + parsed.module) == {2: "import torch\nx = torch.zeros(1)\n%time f()"}


def test_an_evaluation_region_through_several_cells_is_reported_once_per_cell(tmp_path: Path):
    # Yangyangii/GAN-Tutorial: `G.eval()` and a sampling cell, then an interpolation cell running G
    # again with gradients on; each cell is run, and wrapped in no_grad, on its own.
    nb = {
        "cells": [
            code("import torch\nG = Generator().cuda()"),
            code("G.eval()\nimgs = G(z)\nmore = G(z2)"),
            markdown("### Interpolation"),
            code("imgs = G(zs).detach()"),
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    (tmp_path / "gan.ipynb").write_text(nbformat_text(nb), encoding="utf-8")
    result = memlint("check", "--select", "ML002", "--output-format", "json", ".", cwd=tmp_path)
    found = [(f["code"], f["cell"], f["location"]["row"]) for f in json.loads(result.stdout)]
    assert found == [("ML002", 2, 2), ("ML002", 4, 1)]  # one per cell: not again for `G(z2)`
