"""ML004 retained-intermediates."""

from __future__ import annotations

from collections import Counter
from typing import Optional

import libcst as cst

from memlint.analysis.chains import longest_chain
from memlint.analysis.context import GradMode
from memlint.analysis.inventory import inventory
from memlint.analysis.saved import TENSOR_METHODS, keeps_input, keeps_output, known_op, op_kind, reader_of
from memlint.analysis.tables import BROADCASTING, KEEPS_INPUT_ONLY, KEEPS_OUTPUT_ONLY, REDUCTIONS, SHAPE_KEEPING, VIEW_METHODS
from memlint.analysis.walk import code_children, code_descendants, code_with_parents
from memlint.diagnostics import Severity
from memlint.rule import Invalid, NodeFix, Rule, Valid
from memlint.rules.ml004_retained_intermediates.meta import META

_BLOCKERS = (cst.Lambda, cst.FunctionDef, cst.ClassDef, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class RetainedIntermediates(Rule):
    """
    ## What it does
    Finds local names in a module's `forward` that keep an activation alive after its last use,
    where that costs memory. A chain of distinct names, each bound once and read once by the next
    step (`out_1 = self.fc1(x); out_2 = self.fc2(out_1); out_3 = self.fc3(out_2)`, at least
    `min-retained-chain` names, default 3), keeps every tensor until `forward` returns. That
    matters in two places:

    - without gradient tracking: a `forward` decorated with `@torch.no_grad()` /
      `@torch.inference_mode()` (or a decorator of the file that wraps them; a frozen encoder, a
      teacher), or a `with torch.no_grad():` block at the top of `forward`. Nothing else holds the
      tensors there, so every name that outlives its use holds its activation, when the op reading
      it returns a fresh tensor (a submodule, a torch function, arithmetic);
    - with gradients on, a name whose tensor autograd does not keep: it is made by an
      op that does not save its output (`nn.Linear`, a convolution, a norm, GELU, `torch.pow` by a
      number, `+`, `-`) and read by one that does not save its input (`relu`, `sigmoid`, `tanh`,
      `softmax`, `sqrt`, dropout, `+`, `-`, scaling by a number). A step of the chain may be
      arithmetic (`sin_sq = 1 - cos_sq`) when it computes on a tensor of the chain. The tables are
      in `memlint/analysis/tables.py`; tests/test_saved_tables.py checks them against the tensors
      PyTorch's autograd saves.

    Reported once per function (or `with` block), on its first line, naming the tensors held after
    their last use; a name whose reader is the last statement that may allocate is not counted.

    Not reported: a named chain in a `forward` with gradients on whose layers save their inputs
    (`hidden = self.encoder(ids); pooled = self.pooler(hidden); logits = self.head(pooled)`:
    autograd keeps each tensor for backward, so a name costs nothing; it keeps the operands of `*`
    or `/` by a tensor, of `pow` and of a matmul too); arithmetic of what may be a number
    (`n = int(x.sum()); m = n + 1`, with or without gradients: such a step breaks the chain); names rebound in place
    (`x = layer(x)`); values that must coexist (a name used twice, also returned or combined
    later); chains of views (`.view`, `.permute`, ...: they allocate nothing); statistics (a
    `sum` or `mean` and what keeps its shape: small tensors, not activations, with or without
    gradients); layers of the
    project's own or ops that may run in place (what they keep is unknown); a name read by a method
    of the class or an object's constructor (a distribution keeps its parameters). Accepted limits:
    only `forward` is looked at (other no-grad methods, `generate` and `sample` above all, mostly
    juggle index tensors and objects), only straight-line statements at its top (or of the `with`
    block) are followed, and a `forward` only ever called under `torch.no_grad()` by its callers
    is judged as training code.

    ## Why is this bad?
    A local name keeps its tensor alive until it is rebound, deleted or the function returns. When
    nothing else needs the tensor (no gradient tracking, or an op pair that autograd does not keep
    it for), the name alone raises the peak by that tensor while the rest of the function runs.

    ## Example
    ```python
    @torch.no_grad()
    def forward(self, x):
        out_1 = self.fc1(x)
        out_2 = self.fc2(out_1)
        out_3 = self.fc3(out_2)
        return self.fc4(out_3)
    ```

    ## Use instead
    ```python
    @torch.no_grad()
    def forward(self, x):
        out_1 = self.fc1(x)
        out_2 = self.fc2(out_1)
        del out_1
        out_3 = self.fc3(out_2)
        del out_2
        return self.fc4(out_3)
    ```

    Reusing one name (`x = self.fc1(x)`) frees as much; the fix keeps the names and deletes them
    instead, since a readable name (`hidden`, `pooled`) is worth more than a shorter line.

    ## Fix safety
    Inserts `del name` after the statement that reads each reported name last. Unsafe: the name is
    bound once and read once, and nothing else (a closure, a comprehension, `locals()`) refers to
    it, or there is no fix; but code added later that reads the name would fail with `NameError`,
    so the change is left to the user (`--unsafe-fixes`).

    ## Measured effect
    Three Linear layers with named `out_1..out_3` versus reusing `x`, PyTorch 2.13 on CPU (exact
    tensor-storage tracker): a training step peaks at 83.2 MiB either way (each layer saves its
    input for backward, so the tensors are alive anyway: not reported); the forward under
    `torch.no_grad()` peaks at 49.1 MiB versus 47.1 MiB (one activation).

    Fixtures, `memlint confirm fixtures` (PyTorch 2.13.0+cpu, exact tensor-storage tracker;
    docs/measured-savings.md), memlint's fix against the file as written:
    `ml004_retained_no_grad.py` (a `@torch.no_grad()` forward over four Linear layers, batch 256)
    63,471,616 B before, 59,277,312 B after (4.00 MiB, two 256x2048 activations);
    `ml004_retained_forward.py` (forward only, autograd on: `hidden` from a Linear read by ReLU)
    35,199,016 B before, 34,140,200 B after (1.01 MiB: the peak still holds `hidden` while ReLU
    reads it, so what is saved is what the rest of forward allocates, up to one activation);
    `ml004_retained_training.py` (the same model, a full SGD step) 55,175,256 B either way: the
    step's peak is in backward, after `forward` has returned and dropped the name.
    """

    meta = META
    severity = Severity.INFO
    fix_safety = "unsafe"

    VALID = [
        Valid(  # rebinding one name
            """
import torch
class Net(torch.nn.Module):
    @torch.no_grad()
    def forward(self, x):
        x = self.conv1(x)
        x = self.conv2(x)
        x = self.conv3(x)
        return x
"""
        ),
        Valid(  # a named chain under autograd: every layer saves its input, so the names cost nothing
            """
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        out_1 = self.conv1(x)
        out_2 = self.conv2(out_1)
        out_3 = self.conv3(out_2)
        return out_3
"""
        ),
        Valid(  # readable names under autograd (a false positive whose fix renamed them into `input_ids`)
            """
import torch
from torch import nn
class Classifier(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.pooler = nn.Linear(768, 768)
        self.classifier = nn.Linear(768, 2)
    def forward(self, input_ids, attention_mask=None):
        hidden = self.encoder(input_ids, attention_mask=attention_mask)
        pooled = self.pooler(hidden)
        logits = self.classifier(pooled)
        return logits
"""
        ),
        Valid(  # under autograd, the reader keeps its input (GELU saves it): nothing to free
            """
import torch
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 256)
        self.fc2 = nn.Linear(256, 64)
    def forward(self, x):
        h = self.fc1(x)
        a = F.gelu(h)
        y = self.fc2(a)
        return self.norm(y)
"""
        ),
        Valid(  # under autograd, the maker keeps its output (ReLU saves it): nothing to free
            """
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 256)
        self.fc2 = nn.Linear(256, 64)
    def forward(self, x):
        h = torch.relu(self.fc1(x))
        a = torch.sigmoid(h)
        y = self.fc2(a)
        return self.norm(y)
"""
        ),
        Valid(  # under autograd, a block of the project's own: what it keeps is unknown
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.fc = nn.Linear(64, 64)
    def forward(self, x):
        h = self.block(x)
        a = torch.relu(h)
        y = self.fc(a)
        return self.out(y)
"""
        ),
        Valid(  # an in-place activation: its output is its input, nothing extra is held
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Linear(64, 64)
    def forward(self, x):
        h = self.fc1(x)
        a = self.act(h)
        y = self.fc2(a)
        return self.out(y)
"""
        ),
        Valid(  # the values must coexist: combined later
            """
import torch
class Net(torch.nn.Module):
    @torch.no_grad()
    def forward(self, x):
        a = self.conv1(x)
        b = self.conv2(a)
        c = self.conv3(b)
        return torch.cat([a, b, c], dim=1)
"""
        ),
        Valid(  # only two chained names
            """
import torch
class Net(torch.nn.Module):
    @torch.no_grad()
    def forward(self, x):
        h = self.fc1(x)
        y = self.fc2(h)
        return y
"""
        ),
        Valid(  # a no-grad method other than forward: generation code juggles index tensors and objects
            """
import torch
class Model(torch.nn.Module):
    @torch.no_grad()
    def generate(self, input_ids):
        starts = torch.where(input_ids == 1, 1, 0)
        previous = torch.cummax(starts, dim=-1).values
        roles = input_ids.gather(1, previous)
        return self.decode(roles)
"""
        ),
        Valid(  # a no-grad forward whose names are read by a method and an object that keep them
            """
import torch
class Head(torch.nn.Module):
    @torch.no_grad()
    def forward(self, hidden):
        params = self.proj(hidden)
        distr = self.output_distribution(params)
        samples = distr.sample()
        return self.post(samples)
    def output_distribution(self, params):
        return torch.distributions.Normal(*params)
"""
        ),
        Valid(  # views allocate nothing
            """
import torch
class Net(torch.nn.Module):
    @torch.no_grad()
    def forward(self, x):
        a = x.view(x.size(0), -1)
        b = a.permute(1, 0)
        c = b.reshape(-1)
        return self.fc(c)
"""
        ),
        Valid(  # a longer minimum configured
            """
import torch
class Net(torch.nn.Module):
    @torch.no_grad()
    def forward(self, x):
        out_1 = self.conv1(x)
        out_2 = self.conv2(out_1)
        out_3 = self.conv3(out_2)
        return self.head(out_3)
""",
            config={"min-retained-chain": 4},
        ),
        Valid(  # metadata, not activations: position ids built from the input's shape
            """
import torch
class Net(torch.nn.Module):
    @torch.no_grad()
    def forward(self, x):
        grid = torch.tensor([[1, x.shape[2], x.shape[3]]])
        ids = make_position_ids(grid)
        pos = self.rotary(ids)
        return self.blocks(x, pos)
"""
        ),
        Valid(  # arithmetic of a number, not of a tensor: nothing is held
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
    def forward(self, x):
        count = int(x.sum())
        padded = count + 7
        doubled = padded * 2
        rows = self.fc(x)
        return rows[:doubled] + 1
"""
        ),
        Valid(  # `*` by a tensor keeps both operands for backward; a tensor exponent keeps `pow`'s result
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 64)
        self.gamma = nn.Parameter(torch.ones(64))
    def forward(self, x):
        h = self.fc1(x)
        gated = h * self.gamma
        p = torch.pow(gated, self.gamma)
        a = torch.relu(p)
        y = self.fc2(a)
        return self.head(y)
"""
        ),
        Valid(  # statistics: a mean and what is computed from it are small
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
    def forward(self, x):
        centre = torch.mean(x, 0)
        shifted = centre - 1
        spread = torch.sqrt(shifted)
        y = self.fc(x) / spread
        return self.head(y)
"""
        ),
        Valid(  # without gradients too, arithmetic of a number is no step: `count` is not an activation
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
    @torch.no_grad()
    def forward(self, x):
        count = int(x.sum())
        padded = count + 7
        doubled = padded * 2
        rows = self.fc(x)
        return rows[:doubled] + 1
"""
        ),
        Valid(  # a number between tensor steps breaks the chain: `.item()` and what is computed from it
            """
import torch
from torch import nn
class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
    def forward(self, x, lengths):
        with torch.no_grad():
            peak = x.abs().max().item()
            inv = 1.0 / peak
            scaled = torch.round(inv * 127)
            longest = int(lengths.max())
            width = (longest + 7) // 8 * 8
            pos = torch.arange(width, device=x.device)
            emb = self.pos_emb(pos)
        return self.fc(x) * scaled + emb
"""
        ),
        Valid(  # statistics without gradients too: a mean and what is computed from it are small
            """
import torch
from torch import nn
class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
    @torch.no_grad()
    def forward(self, x):
        mu = x.mean()
        centred = mu - 1
        spread = torch.sqrt(centred)
        scale = torch.exp(spread)
        return self.fc(x) / scale
"""
        ),
        Valid(  # a helper with gradients on: neither a forward nor an inference path
            """
import torch
def helper(conv1, conv2, conv3, x):
    out_1 = conv1(x)
    out_2 = conv2(out_1)
    out_3 = conv3(out_2)
    return conv3(out_3)
"""
        ),
    ]

    INVALID = [
        Invalid(  # a no-grad forward: every name that outlives its use holds an activation
            """
import torch
class Net(torch.nn.Module):
    @torch.no_grad()
    def forward(self, x):
        out_1 = self.fc1(x)
        out_2 = self.fc2(out_1)
        out_3 = self.fc3(out_2)
        return self.fc4(out_3)
""",
            line=4,
            column=5,
            message="`forward` runs without gradient tracking (`@torch.no_grad()`) and keeps `out_1`, `out_2` alive after their last use; nothing else holds them",
            unsafe=True,
            fixed="""
import torch
class Net(torch.nn.Module):
    @torch.no_grad()
    def forward(self, x):
        out_1 = self.fc1(x)
        out_2 = self.fc2(out_1)
        del out_1
        out_3 = self.fc3(out_2)
        del out_2
        return self.fc4(out_3)
""",
        ),
        Invalid(  # a no_grad block at the top of forward (a teacher); readable names are kept
            """
import torch
class Distiller(torch.nn.Module):
    def forward(self, images):
        with torch.no_grad():
            features = self.teacher_backbone(images)  # (B, C, H, W)
            pooled = self.teacher_pool(features)
            logits = self.teacher_head(pooled)
            targets = torch.softmax(logits, -1)
        return self.student(images), targets
""",
            line=4,
            column=9,
            message="inside a `with` block without gradient tracking, `features`, `pooled` are kept alive after their last use",
            unsafe=True,
            fixed="""
import torch
class Distiller(torch.nn.Module):
    def forward(self, images):
        with torch.no_grad():
            features = self.teacher_backbone(images)  # (B, C, H, W)
            pooled = self.teacher_pool(features)
            del features
            logits = self.teacher_head(pooled)
            del pooled
            targets = torch.softmax(logits, -1)
        return self.student(images), targets
""",
        ),
        Invalid(  # forward with gradients on: Linear does not keep its output and ReLU keeps its output, not its input
            """
import torch
from torch import nn
class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(512, 2048)
        self.fc2 = nn.Linear(2048, 2048)
        self.fc3 = nn.Linear(2048, 10)
    def forward(self, x):
        hidden = self.fc1(x)
        activated = torch.relu(hidden)
        projected = self.fc2(activated)
        return self.fc3(projected)
""",
            line=9,
            column=5,
            message="`hidden` (made by `self.fc1`, nn.Linear, which keeps its input, not its output; read by `torch.relu`, which keeps its output, not its input)",
            unsafe=True,
            fixed="""
import torch
from torch import nn
class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(512, 2048)
        self.fc2 = nn.Linear(2048, 2048)
        self.fc3 = nn.Linear(2048, 10)
    def forward(self, x):
        hidden = self.fc1(x)
        activated = torch.relu(hidden)
        del hidden
        projected = self.fc2(activated)
        return self.fc3(projected)
""",
        ),
        Invalid(  # arithmetic between torch functions: `pow` keeps its input, `1 - x` nothing, `sqrt` its output
            """
import torch
from torch import nn
class AngularHead(nn.Module):
    def forward(self, features, weight):
        cosine = torch.mm(features, weight).clamp(-1, 1)
        cos_sq = torch.pow(cosine, 2)
        sin_sq = 1 - cos_sq
        sine = torch.sqrt(sin_sq)
        margin = cosine * 0.9 - sine * 0.4
        return margin * 30.0
""",
            line=4,
            column=5,
            message="`cos_sq` (made by `torch.pow`, which keeps its input, not its output; read by `1 - cos_sq`, which keeps neither); `sin_sq` (made by `1 - cos_sq`, which keeps neither its input nor its output; read by `torch.sqrt`, which keeps its output, not its input)",
            unsafe=True,
            fixed="""
import torch
from torch import nn
class AngularHead(nn.Module):
    def forward(self, features, weight):
        cosine = torch.mm(features, weight).clamp(-1, 1)
        cos_sq = torch.pow(cosine, 2)
        sin_sq = 1 - cos_sq
        del cos_sq
        sine = torch.sqrt(sin_sq)
        del sin_sq
        margin = cosine * 0.9 - sine * 0.4
        return margin * 30.0
""",
        ),
        Invalid(  # a layer's output shifted by `+`, then read by `sqrt`: neither step needs the names
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
        self.out = nn.Linear(64, 64)
    def forward(self, x):
        y = self.fc(x)
        z = y + 1
        w = torch.sqrt(z)
        return self.out(w)
""",
            line=8,
            column=5,
            message="`y` (made by `self.fc`, nn.Linear, which keeps its input, not its output; read by `y + 1`, which keeps neither)",
            unsafe=True,
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
        self.out = nn.Linear(64, 64)
    def forward(self, x):
        y = self.fc(x)
        z = y + 1
        del y
        w = torch.sqrt(z)
        del z
        return self.out(w)
""",
        ),
        Invalid(  # `1 / y` keeps the reciprocal it computes, not `y` nor its own result
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
        self.out = nn.Linear(64, 64)
    def forward(self, x):
        y = torch.sigmoid(self.fc(x))
        inv = 1 / y
        shifted = inv + 1
        r = torch.sqrt(shifted)
        return self.out(r)
""",
            line=8,
            column=5,
            message="`inv` (made by `1 / y`, which keeps the reciprocal of its input (a copy the size of its output), not its input or its output; read by `inv + 1`, which keeps neither); `shifted` (made by",
            unsafe=True,
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
        self.out = nn.Linear(64, 64)
    def forward(self, x):
        y = torch.sigmoid(self.fc(x))
        inv = 1 / y
        shifted = inv + 1
        del inv
        r = torch.sqrt(shifted)
        del shifted
        return self.out(r)
""",
        ),
        Invalid(  # `y * scale`: a product keeps an operand only for the other's gradient, none of a number
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
        self.out = nn.Linear(64, 64)
    def forward(self, x, scale: float):
        y = self.fc(x)
        z = y * scale
        w = torch.sqrt(z)
        return self.out(w)
""",
            line=8,
            column=5,
            message="`z` (made by `y * scale`, which keeps each operand for the other's gradient (nothing, when the other is a number), not its output; read by `torch.sqrt`, which keeps its output, not its input)",
            unsafe=True,
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
        self.out = nn.Linear(64, 64)
    def forward(self, x, scale: float):
        y = self.fc(x)
        z = y * scale
        w = torch.sqrt(z)
        del z
        return self.out(w)
""",
        ),
        Invalid(  # `locals()` may read the names: reported without a fix
            """
import torch
class Net(torch.nn.Module):
    @torch.no_grad()
    def forward(self, x):
        a = self.l1(x)
        b = self.l2(a)
        c = self.l3(b)
        self.trace(locals())
        return self.l4(c)
""",
            line=4,
            column=5,
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._grad: dict[int, GradMode] = {}  # `forward`s and their `with` blocks: the grad mode inside
        self._methods: list[set[str]] = []  # the methods of each enclosing class

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._methods.append({s.name.value for s in node.body.body if isinstance(s, cst.FunctionDef)})

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._methods.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value == "forward":
            self._grad[id(node)] = self.ctx.grad_mode  # the context has entered the function already

    def visit_With(self, node: cst.With) -> None:
        function = self.ctx.function_node
        if function is not None and function.name.value == "forward":
            self._grad[id(node)] = self.ctx.grad_mode

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        mode = self._grad.pop(id(node), None)
        class_name = self.ctx.class_name
        if mode is None or class_name is None or not self._methods or not isinstance(node.body, cst.IndentedBlock):
            return
        described = inventory(self.ctx).get(class_name)
        layers = described.attributes if described is not None else {}
        if mode is GradMode.DISABLED and node.decorators:
            self._check(node, node, node.body.body, layers, f"`forward` runs without gradient tracking ({_why(node)}) and")
        elif mode is not GradMode.DISABLED:
            self._check(node, node, node.body.body, layers, None)
        for statement in node.body.body:
            if isinstance(statement, cst.With) and self._grad.pop(id(statement), None) is GradMode.DISABLED:
                if isinstance(statement.body, cst.IndentedBlock):
                    intro = "inside a `with` block without gradient tracking,"
                    self._check(node, statement, statement.body.body, layers, intro)

    def _plain_reader(self, reader: cst.BaseExpression) -> bool:
        """Does `reader` return a fresh tensor that holds nothing of its input: arithmetic, a torch
        function, a known tensor method, or a submodule (`self.fc(h)`, not a method of the class that
        might keep its argument in an object, as a distribution does)?"""
        if isinstance(reader, (cst.BinaryOperation, cst.UnaryOperation)):
            return True
        if not isinstance(reader, cst.Call):
            return False
        func = reader.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            if func.value.value == "self":
                return func.attr.value not in self._methods[-1]
            if func.attr.value in TENSOR_METHODS:
                return True
        qualified = self.ctx.resolve(func)
        return qualified is not None and qualified.startswith("torch.") and qualified.rsplit(".", 1)[1][:1].islower()

    def _check(self, function, owner, statements, layers, no_grad_intro: Optional[str]) -> None:
        """Report the names of the longest chain in `statements` held after their last use (all of
        them without gradient tracking; under autograd, those autograd does not keep)."""
        chain, values = _longest_chain(function, statements)
        if len(chain) < self.option("min-retained-chain"):
            return
        held: list[tuple[str, int, str]] = []  # (name, index of the statement that reads it last, why)
        small: set[str] = set()  # statistics: a reduction's result, and what keeps its shape
        tensors: set[str] = set()  # names with evidence that they hold a tensor
        members: list[bool] = []  # a call (as always), or arithmetic of a tensor of the chain
        for position, name in enumerate(chain):
            value = values[name]
            before = chain[position - 1] if position > 0 else None
            if isinstance(value, cst.Call):
                members.append(True)
                if known_op(value, self.ctx, layers) or (no_grad_intro is not None and self._plain_reader(value)):
                    tensors.add(name)  # a known op, or (no grad) a submodule, torch function or tensor method
            elif before in tensors and _operand_of(value, before):
                members.append(True)
                tensors.add(name)  # `1 - c2` of a tensor `c2`
            else:
                members.append(False)  # arithmetic of what may be a number (`n = int(x.sum()); m = n + 1`)
        # Arithmetic of a number breaks the chain: only runs of members long enough are followed.
        followed = _long_runs(chain, members, self.option("min-retained-chain"))
        if not followed:
            return
        readers = _reader_index(statements)  # one index of the block's readers, not a scan per name
        last_allocating = _last_allocating(statements)
        for position, name in enumerate(chain):
            value = values[name]
            kind = op_kind(value, self.ctx, layers)
            before = chain[position - 1] if position > 0 else None
            if kind in REDUCTIONS or (kind in SHAPE_KEEPING | BROADCASTING and before in small):
                small.add(name)
            if name not in followed:
                continue
            last = readers.get(name)
            if last is None or last_allocating is None or last >= last_allocating:
                continue  # nothing after its reader may allocate: the name costs nothing
            reader = reader_of(_value(statements[last]), name)
            if reader is None:
                continue
            if isinstance(reader, (cst.BinaryOperation, cst.UnaryOperation)) and name not in tensors:
                continue  # `count + 7` of `count = int(x.sum())`: arithmetic of what may be a number
            if name in small:
                continue  # `torch.sum(x, dim)` and what keeps its shape: statistics, not activations
            if no_grad_intro is not None:
                if self._plain_reader(reader):
                    held.append((name, last, ""))
                continue
            if keeps_output(values[name], self.ctx, layers) is False and keeps_input(reader, self.ctx, layers) is False:
                held.append((name, last, _reason(name, values[name], reader, self.ctx, layers)))
        if not held:
            return
        names = ", ".join(f"`{n}`" for n, _, _ in held)
        many = len(held) > 1
        their, them = ("their", "them") if many else ("its", "it")
        if no_grad_intro is None:
            reasons = "; ".join(why for _, _, why in held)
            message = (
                f"`forward` keeps {names} alive after {their} last use, though autograd does not need {them}: "
                f"{reasons}. Only the name holds the tensor until `forward` returns: `del` {them} once read to "
                f"lower forward's peak by up to one activation{' each' if many else ''} (a training step's peak, "
                "often reached in backward, may not change)"
            )
        else:
            kept = f"keeps {names}" if no_grad_intro.endswith("and") else f"{names} {'are' if many else 'is'} kept"
            message = (
                f"{no_grad_intro} {kept} alive after {their} last use; nothing else holds {them}, so "
                f"{'each adds' if many else 'it adds'} up to one activation to the peak of what follows: `del` {them} "
                "once read (or reuse one name)"
            )
        self.report(owner, message, _fix(function, owner, statements, held))


def _why(function: cst.FunctionDef) -> str:
    if len(function.decorators) == 1:
        return f"`@{' '.join(cst.Module([]).code_for_node(function.decorators[0].decorator).split())}`"
    return "decorated"


def _value(statement: cst.CSTNode) -> cst.CSTNode:
    target, value = _simple_assignment(statement)
    return value if value is not None else statement


def _reader_index(statements) -> dict[str, int]:
    """Each name read in `statements`, with the index of the first statement that reads it (the rule
    only follows names read once): one walk over the block."""
    readers: dict[str, int] = {}
    for index, statement in enumerate(statements):
        target, value = _simple_assignment(statement)
        searched = value if value is not None else statement
        for node in code_descendants(searched):
            if type(node) is cst.Name:
                readers.setdefault(node.value, index)
    return readers


def _last_allocating(statements) -> Optional[int]:
    """Index of the last statement that may allocate (searched from the end: usually the last)."""
    for index in range(len(statements) - 1, -1, -1):
        if _may_allocate(statements[index]):
            return index
    return None


def _long_runs(chain: list[str], members: list[bool], minimum: int) -> set[str]:
    """The names of `chain` in runs of consecutive members at least `minimum` long."""
    followed: set[str] = set()
    run: list[str] = []
    for name, member in [*zip(chain, members), ("", False)]:
        if member:
            run.append(name)
            continue
        if len(run) >= minimum:
            followed.update(run)
        run = []
    return followed


def _may_allocate(statement: cst.CSTNode) -> bool:
    """Could the statement allocate a tensor (arithmetic, a call other than a view method)?
    `return x` and `return x.permute(0, 2, 1)` cannot."""
    for node in code_descendants(statement):
        if isinstance(node, cst.BinaryOperation):
            return True
        if isinstance(node, cst.Call) and not (isinstance(node.func, cst.Attribute) and node.func.attr.value in VIEW_METHODS):
            return True
    return False


def _reason(name: str, value: cst.BaseExpression, reader: cst.BaseExpression, ctx, layers) -> str:
    """`h` (made by `self.fc1`, nn.Linear, which keeps its input, not its output; read by ...)."""
    code = ctx.module.code_for_node

    def describe(expr: cst.BaseExpression) -> str:
        if not isinstance(expr, cst.Call):
            return f"`{' '.join(code(expr).split())}`"
        text = f"`{code(expr.func)}`"
        kind = op_kind(expr, ctx, layers)
        return f"{text}, nn.{kind}" if kind and kind[:1].isupper() else text

    kept = _kept_by_maker(value, op_kind(value, ctx, layers))
    read = "its output, not its input" if op_kind(reader, ctx, layers) in KEEPS_OUTPUT_ONLY else "neither"
    return f"`{name}` (made by {describe(value)}, which keeps {kept}; read by {describe(reader)}, which keeps {read})"


def _kept_by_maker(value: cst.BaseExpression, maker: Optional[str]) -> str:
    """What the op that made a held tensor keeps for backward, in words true of that op (never its
    output: the rule only reports tensors whose maker does not keep them)."""
    if maker == "product" and isinstance(value, cst.BinaryOperation):
        left = value.left.expression if isinstance(value.left, cst.UnaryOperation) else value.left
        if isinstance(value.operator, cst.Divide) and isinstance(left, (cst.Integer, cst.Float)):
            return "the reciprocal of its input (a copy the size of its output), not its input or its output"
        return "each operand for the other's gradient (nothing, when the other is a number), not its output"
    if maker in KEEPS_INPUT_ONLY:
        return "its input, not its output"
    return "neither its input nor its output"


def _longest_chain(function: cst.FunctionDef, statements) -> tuple[list[str], dict[str, cst.BaseExpression]]:
    """The longest chain in `statements` (a block of `function`), and each chained name's value."""
    bound: Counter[str] = Counter()
    used: Counter[str] = Counter()
    for node, parents in code_with_parents(function.body, nearest=4):  # all _is_store looks at
        if type(node) is cst.Name:
            parent = parents[-1]
            kind = type(parent)
            if kind is cst.Attribute and parent.attr is node:
                continue
            if kind is cst.Arg and parent.keyword is node:
                continue
            if _is_store(node, parents):
                bound[node.value] += 1
            else:
                used[node.value] += 1
    params = function.params
    for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
        bound[param.name.value] += 1
    # Each allocating assignment of a name bound and used once, with the single earlier such name
    # it consumes (none when it reads zero or several of them): the links of a chain.
    steps: list[tuple[str, list[str]]] = []
    values: dict[str, cst.BaseExpression] = {}
    earlier: set[str] = set()
    single = {n for n in bound if bound[n] == 1 and used[n] == 1}
    activations = _activation_names(function)
    for statement in statements:
        target, value = _simple_assignment(statement)
        if target is None or target not in single or target not in activations or not _allocates(value):
            continue
        names_in = [n.value for n in code_descendants(value) if type(n) is cst.Name]
        inputs = [n for n in names_in if n in single and n in earlier]
        steps.append((target, inputs if len(inputs) == 1 else []))
        values[target] = value
        earlier.add(target)
    best = longest_chain(steps)
    return (best, values) if len(best) >= 2 else ([], {})


def _activation_names(function: cst.FunctionDef) -> set[str]:
    """Names that may hold activations: forward's inputs and what is computed from them (not
    through `.shape`, `.size()`, `.dtype`, `.device` or `len()`, which give metadata)."""
    params = function.params
    names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]} - {"self", "cls"}
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            names.add(extra.name.value)
    for statement in function.body.body:  # type: ignore[union-attr]
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and small.value is not None:
                    if _refers_to_data(small.value, names):
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        names.update(n.value for t in targets for n in [t, *code_descendants(t)] if type(n) is cst.Name)
        else:  # names bound in nested blocks: cannot tell, assume they may hold data
            names.update(n.value for n in code_descendants(statement) if type(n) is cst.Name)
    return names


def _refers_to_data(expr: cst.CSTNode, names: set[str]) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value in names
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("shape", "dtype", "device", "ndim", "is_cuda"):
        return False
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("size", "dim", "numel", "get_device"):
            return False
        if isinstance(func, cst.Name) and func.value == "len":
            return False
    return any(_refers_to_data(child, names) for child in code_children(expr))


def _is_store(node: cst.Name, parents: tuple) -> bool:
    parent = parents[-1]
    kind = type(parent)  # concrete libcst node classes have no subclasses: `type(...) in` is isinstance
    if kind in _TARGET_HOLDERS and getattr(parent, "target", None) is node:
        return True
    if kind in _BINDERS:
        return True
    return kind in _UNPACKING and any(type(p) in _UNPACKING_TARGETS for p in parents[-4:])


_TARGET_HOLDERS = frozenset({cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor})
_BINDERS = frozenset({cst.AsName, cst.Param, cst.FunctionDef, cst.ClassDef})
_UNPACKING = frozenset({cst.Tuple, cst.List, cst.Element, cst.StarredElement})
_UNPACKING_TARGETS = frozenset({cst.AssignTarget, cst.For, cst.CompFor})


def _simple_assignment(statement: cst.CSTNode) -> tuple[Optional[str], Optional[cst.BaseExpression]]:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            return small.targets[0].target.value, small.value
    return None, None


def _allocates(value: Optional[cst.BaseExpression]) -> bool:
    """A call that produces a new tensor (a layer, a function; not a view method), or arithmetic
    (`1 - c2`, `-h`: a new tensor where an operand is one; `_check` asks that of the chain)."""
    if isinstance(value, cst.BinaryOperation):
        return True
    if isinstance(value, cst.UnaryOperation):
        return isinstance(value.operator, (cst.Minus, cst.BitInvert))
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value in VIEW_METHODS:
        return False
    return True


def _operand_of(value: cst.BaseExpression, name: str) -> bool:
    """Is `name` an operand of the arithmetic `value`, directly or through more arithmetic
    (`1 - c2`, `(h + b) * 2`), not inside a call (`int(h.sum()) + 1` is a number)?"""
    if isinstance(value, cst.Name):
        return value.value == name
    if isinstance(value, cst.BinaryOperation):
        return _operand_of(value.left, name) or _operand_of(value.right, name)
    if isinstance(value, cst.UnaryOperation):
        return _operand_of(value.expression, name)
    return False


def _fix(function: cst.FunctionDef, owner: cst.CSTNode, statements, held) -> Optional[NodeFix]:
    """`del name` after the statement that reads each held name, unless something else might
    refer to the names (a closure, a comprehension, `locals()`)."""
    names = {name for name, _, _ in held}
    for node in code_descendants(function.body):
        if isinstance(node, _BLOCKERS) and any(isinstance(n, cst.Name) and n.value in names for n in code_descendants(node)):
            return None  # a closure or comprehension refers to the chain
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("locals", "vars", "eval", "exec"):
            return None
    after: dict[int, list[str]] = {}
    for name, index, _ in held:
        after.setdefault(index, []).append(name)
    body: list[cst.BaseStatement] = []
    for index, statement in enumerate(statements):
        body.append(statement)
        for name in after.get(index, ()):
            body.append(cst.SimpleStatementLine(body=[cst.Del(target=cst.Name(name))]))
    block = owner.body
    new_owner = owner.with_changes(body=block.with_changes(body=body))
    listed = ", ".join(f"`{n}`" for n, _, _ in held)
    return Rule.replace(owner, new_owner, f"Delete {listed} after {'their' if len(held) > 1 else 'its'} last use", safe=False)
