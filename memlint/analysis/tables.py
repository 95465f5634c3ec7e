"""Data tables the analysis and rules consult (kept as data, not code, in the TorchFix manner)."""

from __future__ import annotations

import re

# Context managers and decorators that turn gradient tracking off.
NO_GRAD_CONTEXTS = frozenset(
    {
        "torch.no_grad",
        "torch.inference_mode",
        "torch.autograd.no_grad",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.inference_mode",
    }
)
# Context managers that turn it back on inside a no-grad region.
ENABLE_GRAD_CONTEXTS = frozenset(
    {"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"}
)
SET_GRAD_ENABLED = frozenset(
    {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"}
)

# Methods a framework already runs without gradient tracking (PyTorch Lightning's evaluation loops
# run under torch.no_grad / inference_mode, hooks included).
NO_GRAD_HOOKS = frozenset({"validation_step", "test_step", "predict_step", "validation_step_end", "test_step_end"})
NO_GRAD_HOOK_PREFIXES = ("on_validation_", "on_test_", "on_predict_")
# Lightning's evaluation steps: the Trainer calls each once per batch of the evaluation
# (roles.per_batch_function; ML014's screen reads the same names).
EVALUATION_STEP_HOOKS = frozenset({"validation_step", "test_step", "predict_step"})
# Base-class name -> methods the framework calls inside no_grad / inference_mode.  Hugging Face
# pipelines run `_forward` inside `inference_context()`.
NO_GRAD_FRAMEWORK_METHODS = {"Pipeline": frozenset({"_forward"})}

# What torch's conventional names mean in a file that can only have them from a star import of
# another module (`from utils import *` where utils does `import torch`, `import torch.nn as nn`,
# `import torch.nn.functional as F`), where the project pass cannot tell what the star imports bring.
# A running meter's methods: `meter.update(loss)` keeps what it is given when the class's method adds
# it to `self` (memlint.analysis.meters; summaries' `keeps` for a class of another file).
METER_METHODS = frozenset({"update", "add"})

STAR_IMPORT_CONVENTION = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional"}

# Base classes that make a class an nn.Module.
MODULE_BASES = frozenset(
    {
        "torch.nn.Module",
        "torch.nn.modules.module.Module",
        "pytorch_lightning.LightningModule",
        "pytorch_lightning.core.LightningModule",
        "lightning.LightningModule",
        "lightning.pytorch.LightningModule",
        "lightning.pytorch.core.LightningModule",
        "transformers.PreTrainedModel",
        "transformers.modeling_utils.PreTrainedModel",
    }
)

# Well-known library classes -> the torch.nn class each subclasses without changing what it builds
# or the order it runs its modules in, so the facts about the torch class hold of them
# (`inventory.torch_nn_name` answers the torch name).  torchmeta's modules take an extra
# `params=` in forward (weights for one call) and compute the same function of their input:
# `MetaSequential(nn.Sequential, MetaModule)` runs its modules in order, `MetaLinear(nn.Linear,
# MetaModule)` returns a fresh `F.linear` output.
LIBRARY_TORCH_SUBCLASSES = {
    f"torchmeta.modules{home}.{name}": f"torch.nn.{base}"
    for name, base, module in (
        ("MetaSequential", "Sequential", "container"),
        ("MetaLinear", "Linear", "linear"),
        ("MetaBilinear", "Bilinear", "linear"),
        ("MetaConv1d", "Conv1d", "conv"),
        ("MetaConv2d", "Conv2d", "conv"),
        ("MetaConv3d", "Conv3d", "conv"),
        ("MetaBatchNorm1d", "BatchNorm1d", "batchnorm"),
        ("MetaBatchNorm2d", "BatchNorm2d", "batchnorm"),
        ("MetaBatchNorm3d", "BatchNorm3d", "batchnorm"),
        ("MetaLayerNorm", "LayerNorm", "normalization"),
    )
    for home in ("", f".{module}")
}
# The same by the names code calls them (torch's "Sequential" -> {"MetaSequential"}), for the screens,
# which read names, not imports.
LIBRARY_SUBCLASS_NAMES = {
    base.rpartition(".")[2]: frozenset(k.rpartition(".")[2] for k, b in LIBRARY_TORCH_SUBCLASSES.items() if b == base)
    for base in set(LIBRARY_TORCH_SUBCLASSES.values())
}

# The same base classes by name, for a library's own code that imports them relatively
# (`from ...modeling_utils import PreTrainedModel` inside transformers).
MODULE_BASE_NAMES = frozenset({"PreTrainedModel", "LightningModule"})

# torch.nn.functional losses: they return a 0-d tensor (with the default reduction).
FUNCTIONAL_LOSSES = frozenset(
    {
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "cosine_embedding_loss",
        "cross_entropy",
        "ctc_loss",
        "gaussian_nll_loss",
        "hinge_embedding_loss",
        "huber_loss",
        "kl_div",
        "l1_loss",
        "margin_ranking_loss",
        "mse_loss",
        "multi_margin_loss",
        "multilabel_margin_loss",
        "multilabel_soft_margin_loss",
        "nll_loss",
        "poisson_nll_loss",
        "smooth_l1_loss",
        "soft_margin_loss",
        "triplet_margin_loss",
        "triplet_margin_with_distance_loss",
    }
)

# torch functions that build a fresh tensor with no autograd history.
TENSOR_FACTORIES = frozenset(
    {
        "arange", "as_tensor", "empty", "empty_like", "eye", "from_numpy", "full", "full_like",
        "linspace", "logspace", "ones", "ones_like", "rand", "rand_like", "randint", "randint_like",
        "randn", "randn_like", "randperm", "tensor", "zeros", "zeros_like",
    }
)  # fmt: skip

# Tensor methods whose result keeps the receiver's autograd history.  The value says whether the
# result is a 0-d tensor: True (always, when called without arguments), "same" (as the receiver), False.
GRAPH_PRESERVING_METHODS: dict[str, object] = {
    "sum": True, "mean": True, "norm": True, "prod": True, "std": True, "var": True,
    "cpu": "same", "cuda": "same", "to": "same", "float": "same", "double": "same", "half": "same",
    "bfloat16": "same", "clone": "same", "contiguous": "same", "abs": "same", "neg": "same",
    "mul": "same", "div": "same", "add": "same", "sub": "same", "pow": "same", "sqrt": "same",
    "log": "same", "exp": "same", "squeeze": "same", "type_as": "same",
    "view": False, "reshape": False, "unsqueeze": False, "flatten": False, "permute": False,
    "transpose": False, "t": False, "expand": False, "expand_as": False, "repeat": False,
    "softmax": False, "log_softmax": False, "sigmoid": False, "tanh": False, "relu": False,
    "masked_fill": False, "narrow": False, "select": False, "gather": False, "index_select": False,
    "matmul": False, "mm": False, "bmm": False, "view_as": False, "reshape_as": False,
    # torch.distributions: a distribution built from a model's output keeps its history in what it
    # computes (`dist.log_prob(a)`, `dist.entropy()`, a reparametrised `dist.rsample()`)
    "log_prob": False, "entropy": False, "rsample": False, "cdf": False,
}  # fmt: skip

# Tensor methods and attributes whose result never carries autograd history.
# (`sample()`: a distribution's draw is not differentiable.)
GRAPH_FREE_METHODS = frozenset({"item", "tolist", "numpy", "detach", "argmax", "argmin", "size", "dim", "numel", "eq", "ne", "sample"})
# torch functions whose result never carries autograd history (indices, comparisons, counts).
GRAPH_FREE_FUNCTIONS = frozenset(
    {"argmax", "argmin", "argsort", "argwhere", "nonzero", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf",
     "isfinite", "count_nonzero", "bucketize", "searchsorted", "numel"}
)  # fmt: skip
GRAPH_FREE_ATTRIBUTES = frozenset(
    {"data", "grad", "shape", "dtype", "device", "ndim", "requires_grad", "is_cuda", "is_leaf"}
)

# Names a call is taken to run a model or a loss on, when the analysis cannot see what they hold.
_MODEL_WORDS = (
    "model|net|network|module|encoder|decoder|backbone|classifier|generator|discriminator|critic|"
    "actor|policy|teacher|student|transformer|unet|vae|autoencoder|head"
)
MODEL_NAME = re.compile(rf"^(?:[a-z0-9]+_)*(?:{_MODEL_WORDS})(?:_[a-z0-9]+)*$|^[a-z]*(?:model|net)\d*$")
# A leading verb makes a model-like name a function that handles models (`build_model`,
# `prepare_model`) or a method of one (`model.fuse_model()`, `model.get_encoder()`).
NON_MODEL_VERBS = frozenset(
    {"fuse", "get", "build", "init", "load", "save", "prepare", "convert", "reset", "set", "freeze", "unfreeze",
     "create", "make", "setup", "register", "compile", "export", "quantize", "prune", "tie", "resize", "print",
     "apply", "enable", "disable", "update", "copy", "clone", "wrap", "unwrap", "postprocess", "preprocess",
     "process", "dispatch", "move", "cast", "check", "validate", "replace", "patch", "find", "is", "has", "add",
     "remove", "attach", "detach", "offload", "shard", "parallelize", "unpack", "pack"}
)  # fmt: skip
# A container named for losses (`self.criterions`, `loss_fns`): its entries are modules that reduce
# (one number per batch), not models whose outputs are kept or run; its name's `_`-separated words.
LOSS_CONTAINER_WORDS = frozenset({"loss", "losses", "criterion", "criterions"})
LOSS_NAME = re.compile(
    r"^(?:[a-z0-9]+_)*(?:criterion|loss_fn|loss_func|lossfn|loss_function|loss_module|compute_loss)"
    r"(?:_[a-z0-9]+)*$|^criterion\d*$|^loss$"
)

# Tensor methods that combine their receiver and one argument element by element into a new tensor
# whose graph reaches both (`total.add(loss)`, `worst.maximum(loss)`; accumulation.added_parts, and
# ML001's screen, which may not load libcst).
COMBINING_METHODS = frozenset({"add", "max", "min", "maximum", "minimum", "fmax", "fmin"})

# Calls that run backward through their argument or receiver.
BACKWARD_METHODS = frozenset({"backward", "manual_backward"})
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.grad", "torch.autograd.backward"})
# The keywords of a backward call that keep the graph after it: `retain_graph`, and its spelling
# before PyTorch 0.4, `retain_variables` (deprecated in 0.2, removed in 0.4: `loss.backward(retain_variables=True)`
# in code written for those versions keeps the graph exactly as `retain_graph=True` does).
RETAIN_GRAPH_KEYWORDS = ("retain_graph", "retain_variables")

# torch.nn class -> index of `inplace` among its positional parameters.
INPLACE_MODULES: dict[str, int] = {
    "ReLU": 0, "ReLU6": 0, "LeakyReLU": 1, "ELU": 1, "SELU": 0, "CELU": 1, "Hardtanh": 2,
    "Hardswish": 0, "Hardsigmoid": 0, "SiLU": 0, "Mish": 0, "Threshold": 2, "RReLU": 2,
    "Dropout": 1, "Dropout1d": 1, "Dropout2d": 1, "Dropout3d": 1, "AlphaDropout": 1, "FeatureAlphaDropout": 1,
}  # fmt: skip
# torch.nn.functional function -> index of `inplace` among its positional parameters.
INPLACE_FUNCTIONS: dict[str, int] = {
    "relu": 1, "relu6": 1, "leaky_relu": 2, "elu": 2, "selu": 1, "celu": 2, "hardtanh": 3,
    "hardswish": 1, "hardsigmoid": 1, "silu": 1, "mish": 1, "threshold": 3, "rrelu": 4,
    "dropout": 3, "dropout1d": 3, "dropout2d": 3, "dropout3d": 3, "alpha_dropout": 3, "feature_alpha_dropout": 3,
}  # fmt: skip
# Activations torch offers with no `inplace` parameter, as a function (`torch.relu(x)`) and as a
# Tensor method (`x.relu()`), and the in-place twin that replaces either (`torch.relu_`, `x.relu_()`:
# the same backward, relu's reads only its output).
INPLACE_TWINS: dict[str, str] = {"relu": "relu_"}

# torch factories that build a tensor from sizes, on the CPU unless told otherwise; with `device=`
# they allocate on the device directly.  Not the data constructors (`tensor`, `as_tensor`,
# `from_numpy`): `torch.tensor(data, device=d)` also builds the tensor on the host and then copies
# it (PyTorch 2.13's dispatch: `lift_fresh` on the CPU, then `_to_copy`).
# The signal windows (`torch.hann_window(n)`, for an STFT in a training step) are such factories too:
# a length, `dtype=` and `device=`; their values are cosines, which a GPU kernel may round differently.
WINDOW_FACTORIES = frozenset({"hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"})
TORCH_FACTORIES = frozenset(
    {"zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm"}
) | WINDOW_FACTORIES  # fmt: skip
# torch's elementwise math of one tensor (and numbers: `torch.pow(t, 2)`, `t.clamp(0, 1)`), as functions
# (`torch.log(u)`) or methods (`t.cos()`): a new tensor on the device of their tensor, so a function of a
# host tensor is one (host_returns: `sample_gumbel`'s `-torch.log(eps - torch.log(u + eps))` of a host
# `torch.rand`; host_factories and host_flow for ML013; ML013's screen).
ELEMENTWISE_FUNCTIONS = frozenset(
    {"log", "log1p", "log2", "log10", "exp", "exp2", "expm1", "sqrt", "rsqrt", "abs", "neg", "sin", "cos", "tan", "tanh",
     "sigmoid", "floor", "ceil", "round", "trunc", "reciprocal", "square", "sign", "pow", "clamp", "erf"}
)  # fmt: skip
# The legacy typed constructors, which called with sizes (`torch.FloatTensor(n, c, h, w)`) make an
# uninitialised host tensor as `torch.empty` with this dtype does (ML013 and its screen).
LEGACY_SIZED_CONSTRUCTORS = {
    "FloatTensor": "float32", "Tensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
    "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16", "ByteTensor": "uint8",
    "CharTensor": "int8", "BoolTensor": "bool",
}  # fmt: skip
# In-place fills of a fresh tensor (`torch.FloatTensor(n).zero_()`): it stays where it was made.
IN_PLACE_FILLS = frozenset({"zero_", "fill_", "normal_", "uniform_", "random_", "bernoulli_"})
# In-place arithmetic with one operand (`torch.ones(n).mul_(sigma)`): with a number, the tensor stays
# where it is, as `t * sigma` does (ML013's `factory_under` and its screen).
IN_PLACE_ARITHMETIC = frozenset({"mul_", "div_", "add_", "sub_"})
# torch.optim classes that keep two moment estimates per parameter (and divide by sqrt(v) + eps).
ADAM_CLASSES = ("Adam", "AdamW", "NAdam", "RAdam", "Adamax", "SparseAdam")
# Tensor methods that return a view (or metadata): a chain of these allocates nothing.
VIEW_METHODS = frozenset(
    {"view", "reshape", "permute", "transpose", "t", "flatten", "unflatten", "squeeze", "unsqueeze", "expand",
     "expand_as", "view_as", "reshape_as", "narrow", "select", "chunk", "split", "unbind", "contiguous", "size",
     "dim", "detach", "float", "to", "type_as", "movedim", "mT", "T"}
)  # fmt: skip
# Tensor methods that make one tensor from the receiver's values alone, on the receiver's device, with
# the same values on every device (reshaping, repeating, copying): `torch.arange(n).view(-1, 1)` is
# still a tensor built from sizes, wherever the factory put it.
SHAPE_METHODS = frozenset(
    {"view", "reshape", "permute", "transpose", "t", "flatten", "unflatten", "squeeze", "unsqueeze", "expand",
     "expand_as", "view_as", "reshape_as", "repeat", "contiguous", "clone", "movedim"}
)  # fmt: skip
# Tensor methods that cast to a dtype and keep the tensor on its device (`.long()`, `.half()`): a
# host tensor cast is still on the host, a device tensor's still on the device.
TENSOR_CASTS = frozenset({"long", "int", "short", "byte", "bool", "float", "double", "half", "bfloat16", "char"})
# Layers whose output is not needed for their own backward (an in-place op right after them is safe).
OUTPUT_NOT_SAVED = frozenset(
    {
        "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Linear",
        "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
        "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "GroupNorm", "LayerNorm",
        "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "Embedding",
        "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
        "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
        "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
    }
)  # fmt: skip

# What autograd keeps of an op's input and output for backward (PyTorch 2.13, read from each op's
# `grad_fn._saved_*`): a tensor neither its maker nor its reader keeps is held only by the names
# that refer to it.  Layers by class name, functions by name (`torch.X`, `torch.nn.functional.X`,
# `Tensor.X`); the operators by the names `saved.op_kind` gives them: "add" stands for `+`, `-` and
# unary minus, "scale" for `*` or `/` by a number, "product" for `*` or `/` by what may be a tensor
# (each operand is kept for the other's gradient), "pow" for `**` by a number, "matmul" for `@`.
# Keep their output, not their input:
KEEPS_OUTPUT_ONLY = frozenset(
    {"ReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "relu", "sigmoid", "tanh", "softmax", "log_softmax", "exp",
     "sqrt", "rsqrt", "reciprocal", "expm1", "tan"}
)  # fmt: skip
# Keep neither (dropout keeps its mask):
KEEPS_NEITHER = frozenset(
    {"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "dropout", "dropout1d", "dropout2d", "dropout3d", "add", "scale",
     "sub", "neg", "sum", "mean", "cumsum", "cat"}
)  # fmt: skip
# Keep their input, not their output (layers: OUTPUT_NOT_SAVED and these):
KEEPS_INPUT_ONLY = OUTPUT_NOT_SAVED | frozenset(
    {
        "GELU", "SiLU", "LeakyReLU", "ELU", "SELU", "ReLU6", "Hardtanh", "Hardswish", "Mish", "Softplus",
        "linear", "conv1d", "conv2d", "conv3d", "layer_norm", "batch_norm", "group_norm", "instance_norm",
        "gelu", "silu", "leaky_relu", "elu", "selu", "relu6", "hardtanh", "hardswish", "mish", "softplus",
        "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "matmul", "mm", "bmm",
        "pow", "square", "clamp", "abs", "log", "log1p", "sin", "cos", "erf", "product",
    }
)  # fmt: skip
# Reductions: their result is small (a statistic), never an activation worth a finding; ops that keep
# the shape of their one tensor operand keep it small.
REDUCTIONS = frozenset({"sum", "mean"})
SHAPE_KEEPING = frozenset(
    {"cumsum", "sqrt", "rsqrt", "exp", "log", "abs", "pow", "square", "clamp", "scale", "relu", "sigmoid", "tanh",
     "softmax", "log_softmax", "reciprocal", "expm1", "tan", "log1p", "sin", "cos", "erf", "neg"}
)  # fmt: skip
# Ops of two operands: of a statistic and another tensor, the result may be as large as the other
# (`mean - x`) or as small as the statistic; ML004 counts it small, so it stays silent.
BROADCASTING = frozenset({"add", "sub", "product", "matmul"})

# PyTorch Lightning 1.x: a LightningModule that overrides the epoch-end hook gets, in its `outputs`
# argument, what the step hook returned for every batch of the epoch; the Trainer keeps those values
# (where the step left them, on the device) until the epoch ends.  Lightning 2.0 removed these hooks.
# Step hook -> the epoch-end hook that makes the Trainer keep its returns.
EPOCH_END_KEEPS = {
    "training_step": "training_epoch_end",
    "validation_step": "validation_epoch_end",
    "test_step": "test_epoch_end",
}

# Fields of a model's output object that are tensors (Hugging Face `ModelOutput`s, diffusers'
# `UNet2DConditionOutput.sample`): `.cpu()` exists on them.  Other fields (`latent_dist`, a
# distribution; `past_key_values`, tuples) are not known to be tensors.
TENSOR_OUTPUT_FIELDS = frozenset(
    {
        "logits", "last_hidden_state", "pooler_output", "sample", "prediction_logits", "start_logits",
        "end_logits", "image_embeds", "text_embeds", "embeddings", "predicted_depth", "pred_boxes",
        "pred_masks", "loss",
    }
)  # fmt: skip

# Hooks whose return value the framework backpropagates: Lightning's automatic optimization calls
# backward on what `training_step` returns (the tensor, or `"loss"` of a returned dict) unless the
# module sets `self.automatic_optimization = False`.  A returned name is then evidence of history,
# as `loss.backward()` would be.
BACKPROPAGATED_RETURNS = frozenset({"training_step"})

# Methods of a distributed-training helper that return their argument's values gathered from every
# process, on the same device (accelerate's `accelerator.gather(x)` / `gather_for_metrics(x)` /
# `pad_across_processes(x)`, Fabric's and Lightning's `all_gather(x)`): a model output stays one.
GATHERING_METHODS = frozenset({"gather", "gather_for_metrics", "all_gather", "pad_across_processes"})


# `torch` / `torch.nn.functional` functions whose result is a new tensor (never an operand returned
# as it is) that their backward does not read: an activation may overwrite it in place.  Checked
# against PyTorch 2.13's saved tensors (`saved_tensors_hooks`: `F.gelu` keeps its input, `torch.mm`
# / `torch.matmul` their operands, `torch.cat` nothing).  Not the functions that may run in place
# (`F.elu(x, inplace=True)` returns `x`), nor dropout (`training=False` returns its input itself),
# nor `pow` (with a tensor exponent its backward reads its result); "scale" and "product" name `x * 2` and
# `x * y`, no function.
# Also the ops of that kind the KEEPS_* tables do not name (their backward keeps some operands, not
# all, or only sizes): the fused multiply-adds (`torch.addcmul(shift, x, scale)` keeps `x` and
# `scale`, never its result), `torch.mul` / `torch.div` / `torch.einsum` (of two operands or more: `einsum_of_operands`), `torch.lerp` / `torch.where`
# / `torch.stack`, and the layers' functions `F.conv_transpose*d`, `F.bilinear`, `F.embedding`,
# `F.interpolate`, `F.pad`, `F.normalize`, `F.adaptive_avg_pool*d` (each checked with PyTorch 2.13:
# a new tensor, no saved tensor shares its storage, and `F.silu(..., inplace=True)` on it gives the
# gradients the out-of-place one does).
FRESH_RESULT_FUNCTIONS = frozenset(
    name for name in KEEPS_NEITHER | KEEPS_INPUT_ONLY
    if name.islower() and name not in INPLACE_FUNCTIONS and not name.startswith("dropout")
    and name not in ("pow", "scale", "product")
) | frozenset(
    {"addcmul", "addcdiv", "addmm", "addmv", "addr", "addbmm", "baddbmm", "mul", "div", "einsum", "lerp", "where",
     "stack", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "bilinear", "embedding", "interpolate",
     "pad", "normalize", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"}
)  # fmt: skip


def einsum_of_operands(positional: int, starred: bool) -> bool:
    """`torch.einsum(equation, a, b, ...)` with two operands or more, written out: a product, a new
    tensor.  With one operand (`"bchw->bhwc"`, `"ii->i"`) einsum may return a view of it (checked with
    PyTorch 2.13): an activation in place would write into the operand."""
    return positional >= 3 and not starred


# Tensor methods with the same property (`h.div(rowsum)`, `g.ndata["h"].sum(1)`, `a.mm(b)`): out of
# place, each returns a new tensor that its backward does not read (PyTorch 2.13's saved tensors:
# `div` / `mul` / `mm` keep their operands, `sum` / `add` / `sub` nothing).
FRESH_RESULT_METHODS = frozenset(
    {"mm", "bmm", "matmul", "sum", "mean", "cumsum", "div", "mul", "add", "sub", "abs", "log", "clamp", "square",
     "addcmul", "addcdiv", "addmm", "addmv", "addr", "addbmm", "baddbmm", "lerp"}
)  # fmt: skip
# Tensor methods that return a view of their receiver with another shape (a reshape may copy it):
# an activation in place on `x.view(n, -1)` overwrites `x`'s tensor (ML003: analysis/fresh_values.py).
RESHAPE_METHODS = frozenset({"view", "reshape", "flatten"})


# Layers whose output is a new tensor their backward does not read: those of `OUTPUT_NOT_SAVED`
# and the activations that keep only their input and cannot run in place (`nn.GELU`, `nn.Softplus`:
# checked with PyTorch 2.13's saved tensors).  An in-place activation or dropout right after one is exact.
FRESH_OUTPUT_LAYERS = OUTPUT_NOT_SAVED | frozenset(
    name for name in KEEPS_INPUT_ONLY if name[:1].isupper() and name not in INPLACE_MODULES
)

# A file whose text (code, strings or comments) has none of these words puts nothing on an
# accelerator by itself: the project pass's `host` bit of a summary (summaries.py). Loose on purpose:
# a comment that mentions a GPU counts (the semantic model's `accelerator_named` below is the exact
# form, on the file's names and strings).
# Names of a flag that says whether the accelerator is used (`if self.cuda:`, `if use_gpu:`,
# `x.is_cuda`): a device check, not an opt-in (iteration.condition_is_device_check, flag_arguments).
# Names that hold the run's configuration (`args.loss`, `opt.mode`, `self.args.padding`): fixed for the run.
CONFIGURATION_ROOTS = frozenset({"args", "opt", "opts", "config", "cfg", "conf", "hparams", "hp", "hyp", "settings", "flags", "FLAGS"})
DEVICE_FLAGS = frozenset({"is_cuda", "cuda", "use_cuda", "cuda_available", "has_cuda", "on_cuda", "gpu", "use_gpu", "on_gpu", "gpu_mode"})
# Names of the accelerators a run was given, `None` for a run on the host (`self.device_id = device_id`
# of face.evoLVe's heads, `args.gpu`): `if self.device_id is not None:` asks which device the run has
# (iteration.condition_is_device_check), fixed for the run, and its body is the accelerator's.
DEVICE_IDS = frozenset({"device_id", "device_ids", "gpu", "gpus", "gpu_id", "gpu_ids"})
ACCELERATOR_TEXT = re.compile(r"cuda|device|gpu|accelerat|\b(?:mps|xpu|tpu)\b", re.I)
# `os.environ["CUDA_VISIBLE_DEVICES"] = ""` (or "-1") hides every GPU from the process: it names CUDA
# only to switch it off, evidence of a CPU-only run, not of an accelerator (ikostrikov/pytorch-a3c's
# main.py).  Both the text check above (the summary's `host` bit) and `accelerator_named` skip it.
CUDA_SWITCHED_OFF = re.compile(r"""environ\s*\[\s*(['"])CUDA_VISIBLE_DEVICES\1\s*\]\s*=\s*(['"])(?:-1)?\2""")
# Words that name an accelerator (the semantic model's `accelerator_named` fact, accelerators.py).
# An identifier names one when it is `cuda...` or has one of these as a whole `_`-separated part
# (`device`, `use_cuda`, `args.gpu`, `n_gpus`, `accelerator`, `mps_device`, `gpu0`); a string when it
# holds `cuda`, or `gpu` / `mps` / `xpu` as a word (`"cuda:0"`, `"GPU"`).
ACCELERATOR_IDENTIFIER = re.compile(r"cuda|(?:^|_)(?:device|devices|gpu|gpus|accelerator|mps|xpu|tpu)(?:_|$|\d)", re.I)
ACCELERATOR_STRING = re.compile(r"cuda|\bgpu\b|\bmps\b|\bxpu\b", re.I)
# A text without any of these has neither (a necessary condition of both: a cheap pre-check). The
# words stand whole as the two above ask (no letter or digit before, no letter after), not anywhere in
# a word: bare `tpu` / `mps` / `device` letters matched `output`, `dumps`, `inputs` and let through
# a third of the files without a mention (timm: 97 of 304 files skipped by letters, 114 by words).
ACCELERATOR_LETTERS = re.compile(r"cuda|(?<![a-z0-9])(?:device|devices|gpu|gpus|accelerator|mps|xpu|tpu)(?![a-z])", re.I)
# `torch.cuda.<query>`: seeding the CUDA generator or asking what is there names CUDA without using it.
CUDA_QUERIES = frozenset({"manual_seed", "manual_seed_all", "seed", "seed_all", "is_available", "device_count"})

# A loop of at most this many iterations written in the code (`range(10)`, a literal list, a loop that
# breaks once a counter reaches it) is a fixed small count (sample grids, a few demo predictions,
# the ten rows of a plot), not a loop per step (roles.loop_scope, summaries._counted_break).
SMALL_COUNT = 64

# Names that stand for a normalisation layer where the file does not name torch's class
# (analysis/norm_layers.py): a project class named as one of torch's norms (`SynchronizedBatchNorm2d`),
# and a constructor parameter named as a norm (`norm_layer`, `norm`, deeplab's `BatchNorm`, `bn_layer`;
# not `normal_init`).  Plain regular expressions: ML003's screen tests the same words.
NORM_CLASS_NAME = re.compile(r"(Batch|Instance|Group|Layer)Norm")
# torch's norm classes: they keep their input and statistics for backward, never their output.
TORCH_NORM_CLASSES = frozenset(
    {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "GroupNorm", "LayerNorm",
     "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"}
)  # fmt: skip
NORM_PARAMETER_NAME = re.compile(r"norm(?!al)|^bn(_|$)|_bn$", re.I)

# Module methods that return the module itself (`Meta(args).to(device)`, `G().cuda().train()`): a name
# bound to such a chain holds an instance of the class constructed at its root (the semantic model's
# `constructed`, and the summaries' instance references of the project pass).
MODULE_RETURNING = frozenset({"to", "cuda", "cpu", "requires_grad_", "half", "float", "double", "bfloat16", "to_empty", "train", "eval"})

# Calls that join tensors: a part goes to the device with the whole when the result is moved.
CONCATENATIONS = frozenset({"torch.cat", "torch.concat", "torch.concatenate"})
# Calls that stack tensors: as with a concatenation, a part goes to the device with the whole.
STACKS = frozenset({"torch.stack", "torch.hstack", "torch.vstack", "torch.dstack", "torch.column_stack"})
# Calls that build a tensor (or `meshgrid`'s tuple of grids) from tensors that must all be on one
# device, and put the result there: made of host tensors only, it is on the host too.
BUILT_FROM_PARTS = CONCATENATIONS | STACKS | {"torch.meshgrid"}

# The legacy autograd wrapper: `Variable(x)` is `x`, on the device `x` is on.
VARIABLE_CLASSES = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})


def scoped_call(function: str, written: str) -> str:
    """The project pass's key for a call on an instance a function binds (`policy.train` in
    `train_BCQ`, "train_BCQ>policy.train"; "" is the module's code): the same receiver name means
    another object in another function."""
    return f"{function}>{written}"


# Lightning's Trainer, as its packages export it (`pytorch_lightning.Trainer`, `lightning.Trainer`,
# `lightning.pytorch.Trainer`, and the module that defines it).
LIGHTNING_TRAINERS = frozenset(
    {"pytorch_lightning.Trainer", "pytorch_lightning.trainer.Trainer", "pytorch_lightning.trainer.trainer.Trainer",
     "lightning.Trainer", "lightning.pytorch.Trainer", "lightning.pytorch.trainer.Trainer",
     "lightning.pytorch.trainer.trainer.Trainer"}
)  # fmt: skip

# torchnet's training engine: `Engine().train(network, iterator, maxepoch, optimizer)` is a training
# loop, `Engine().test(network, iterator)` an evaluation loop with gradients on (frameworks.py).
TORCHNET_ENGINES = frozenset({"torchnet.engine.Engine", "torchnet.engine.engine.Engine"})

# pytorch-ignite's engine: `Engine(process_function)` calls the function once per batch inside
# `engine.run(data, max_epochs=...)` (frameworks.ignite_engine_run).
IGNITE_ENGINES = frozenset({"ignite.engine.Engine", "ignite.engine.engine.Engine"})

# Methods a framework calls once per batch (Lightning hooks, HF Trainer callbacks' step methods).
PER_BATCH_HOOKS = frozenset(
    {
        "training_step", "validation_step", "test_step", "predict_step",
        "on_train_batch_start", "on_train_batch_end", "on_validation_batch_start", "on_validation_batch_end",
        "on_test_batch_start", "on_test_batch_end", "on_predict_batch_start", "on_predict_batch_end",
        "on_before_backward", "on_after_backward", "on_before_optimizer_step", "on_before_zero_grad",
        "on_step_begin", "on_step_end",
    }
)  # fmt: skip

# Deep-learning frameworks other than PyTorch, by the top-level package a file imports
# (memlint.analysis.deep_imports): a file written for one of them and never importing torch is not
# PyTorch code, whatever its `.eval()`, `nn`, optimizers and loops look like (a paddle.nn.Layer, a
# Gluon Block, a Keras Model).
OTHER_FRAMEWORKS = frozenset(
    {"paddle", "paddlenlp", "paddleseg", "paddlex", "mxnet", "gluoncv", "gluonnlp", "tensorflow", "tf_keras",
     "keras", "jax", "flax", "haiku", "optax", "mindspore", "oneflow", "chainer", "theano", "lasagne",
     "megengine", "jittor", "caffe", "cntk", "tensorlayer", "sonnet", "trax"}
)  # fmt: skip
# Libraries built on PyTorch that hand a file torch's models, optimizers or tensors: importing one
# (or anything whose dotted name has a `torch*` / `pytorch*` part: torchvision, horovod.torch)
# makes the file PyTorch code.
TORCH_LIBRARIES = frozenset(
    {"lightning", "ignite", "timm", "kornia", "apex", "deepspeed", "fairseq", "mmcv", "mmdet", "mmseg",
     "mmengine", "mmpose", "detectron2", "transformers", "accelerate", "diffusers", "peft", "lpips", "open_clip",
     "xformers", "bitsandbytes", "fastai", "allennlp", "pytorch3d", "thop", "functorch", "opacus", "dgl",
     "spconv", "einops", "safetensors", "tensorboardX", "onnx2torch", "segmentation_models_pytorch", "fvcore"}
)  # fmt: skip
# Third-party libraries (dotted prefixes) known to import no torch: a file of another framework
# importing only these, the standard library and its framework is not PyTorch code
# (memlint.analysis.deep_imports).  Any module not listed, and not resolved to a torch-free file of
# the project, may bring torch in.
NON_TORCH_LIBRARIES = frozenset(
    {"numpy", "scipy", "cv2", "PIL", "skimage", "matplotlib", "tqdm", "yaml", "requests", "pandas",
     "sklearn", "h5py", "imageio", "easydict", "mpi4py", "nose", "paddleslim", "paddlelite",
     "horovod.mxnet", "horovod.tensorflow", "horovod.keras"}
)  # fmt: skip
