"""Reference models and an independent measurement of a real training step's peak memory, shared by
bench/estimate_accuracy.py (which writes docs/estimate-accuracy.md) and tests/test_estimate.py.

The measurement does not use memlint: torch.profiler's allocation events over two real training
steps on CPU, plus the parameters and buffers that exist before profiling starts.  The file is
also a model file for `memlint estimate PATH:FACTORY`.
"""

from __future__ import annotations

import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import torch
    from torch import nn
    from torch.profiler import ProfilerActivity, profile


class Encoder(nn.Module):
    def __init__(self, layers=2, dim=128):
        super().__init__()
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(dim, 4, 4 * dim, dropout=0.0, batch_first=True) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def mlp():
    return nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))


def cnn():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10),
    )  # fmt: skip


def wide_cnn():
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 100),
    )  # fmt: skip


class UNet(nn.Module):
    """A small U-Net: two down and two up stages with skip connections."""

    class Double(nn.Module):
        def __init__(self, cin: int, cout: int) -> None:
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            )  # fmt: skip

        def forward(self, x):
            return self.body(x)

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        w = width
        self.down1, self.down2, self.bottom = self.Double(3, w), self.Double(w, 2 * w), self.Double(2 * w, 4 * w)
        self.up2, self.up1 = nn.ConvTranspose2d(4 * w, 2 * w, 2, 2), nn.ConvTranspose2d(2 * w, w, 2, 2)
        self.dec2, self.dec1 = self.Double(4 * w, 2 * w), self.Double(2 * w, w)
        self.head = nn.Conv2d(w, 2, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(nn.functional.max_pool2d(d1, 2))
        b = self.bottom(nn.functional.max_pool2d(d2, 2))
        u2 = self.dec2(torch.cat([self.up2(b), d2], 1))
        u1 = self.dec1(torch.cat([self.up1(u2), d1], 1))
        return self.head(u1)


class Recurrent(nn.Module):
    def __init__(self, cell: type, features: int = 128, hidden: int = 256, layers: int = 2) -> None:
        super().__init__()
        self.rnn = cell(features, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 10)

    def forward(self, x):
        return self.head(self.rnn(x)[0])


def stock_encoder():
    """nn.TransformerEncoder deep-copies its layer (copy.deepcopy) for each of its layers."""
    layer = nn.TransformerEncoderLayer(128, 4, 512, dropout=0.1, batch_first=True)
    return nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)


class TransposedLinear(nn.Module):
    """nn.Linear on a non-contiguous 3-D input (sequence-first made batch-first): eager adds the
    bias in place, where any dispatch mode makes torch add it out of place (memlint/estimate/eager.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(256, 1024)

    def forward(self, x):
        return self.proj(x.transpose(0, 1))


class GRULanguageModel(nn.Module):
    """Embedding, 2 x nn.GRU(256), a Linear head on the batch-first (non-contiguous) output."""

    def __init__(self, vocabulary: int = 1000, dim: int = 256) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocabulary, dim)
        self.rnn = nn.GRU(dim, dim, num_layers=2, batch_first=True)
        self.head = nn.Linear(dim, vocabulary)

    def forward(self, tokens):
        return self.head(self.rnn(self.embed(tokens))[0])


class FrozenBackbone(nn.Module):
    """A CNN whose convolutions are frozen (fine-tuning the head): no backward through the
    convolutions, so the peak falls in the forward pass, inside a convolution."""

    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2), nn.Conv2d(128, 128, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )  # fmt: skip
        self.backbone.requires_grad_(False)
        self.head = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 10))

    def forward(self, x):
        return self.head(self.backbone(x))


class ImageText(nn.Module):
    """Two inputs of two dtypes: a float image and int64 token ids (a CLIP-like pair)."""

    def __init__(self, vocabulary: int = 1000, dim: int = 128) -> None:
        super().__init__()
        self.image = nn.Sequential(nn.Conv2d(3, 32, 4, stride=4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, dim))
        self.embed = nn.Embedding(vocabulary, dim)
        self.text = nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0, batch_first=True)

    def forward(self, image, tokens):
        return self.image(image) @ self.text(self.embed(tokens)).mean(1).t()


class TinyGPT(nn.Module):
    """A GPT with tied input and output embeddings: 2 pre-norm blocks of causal self-attention."""

    def __init__(self, vocabulary: int = 2000, dim: int = 128, layers: int = 2, context: int = 64) -> None:
        super().__init__()
        self.embed, self.position = nn.Embedding(vocabulary, dim), nn.Embedding(context, dim)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(dim, 4, 4 * dim, dropout=0.0, batch_first=True, norm_first=True) for _ in range(layers)
        )  # fmt: skip
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocabulary, bias=False)
        self.head.weight = self.embed.weight  # tied

    def forward(self, tokens):
        steps = tokens.shape[1]
        x = self.embed(tokens) + self.position(torch.arange(steps, device=tokens.device))
        mask = nn.Transformer.generate_square_subsequent_mask(steps, device=tokens.device)
        for block in self.blocks:
            x = block(x, src_mask=mask, is_causal=True)
        return self.head(self.norm(x))


CASES = [
    ("MLP 256-1024-1024-10", mlp, (128, 256)),
    ("CNN conv-BN-ReLU x2", cnn, (16, 3, 32, 32)),
    ("CNN with pooling, batch 32 at 64x64", wide_cnn, (32, 3, 64, 64)),
    ("2 transformer encoder layers (d=128)", Encoder, (8, 64, 128)),
    ("stock nn.TransformerEncoder (deepcopy), 3 layers", stock_encoder, (8, 64, 128)),
    ("nn.LSTM, 2 layers of 256", lambda: Recurrent(nn.LSTM), (8, 64, 128)),
    ("nn.GRU, 2 layers of 256", lambda: Recurrent(nn.GRU), (8, 64, 128)),
    ("U-Net, 16 channels", UNet, (2, 3, 64, 64)),
]
OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=1e-2, foreach=True),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-3, foreach=True),
    "adamw": lambda p: torch.optim.AdamW(p, lr=1e-3, foreach=True),
    "sgd-momentum": lambda p: torch.optim.SGD(p, lr=1e-2, momentum=0.9, foreach=True),
}
AUTOCAST = {"bf16-autocast": torch.bfloat16, "fp16-autocast": torch.float16}


def _loss(output) -> torch.Tensor:
    """The mean of the first floating-point tensor in the output (a tensor, a tuple, a dict)."""
    if isinstance(output, torch.Tensor):
        return output.float().mean()
    values = output.values() if isinstance(output, dict) else output
    return next(_loss(v) for v in values if isinstance(v, (torch.Tensor, dict, tuple, list)))


def _input(shape, dtype: str, vocabulary: int) -> torch.Tensor:
    return torch.randint(0, vocabulary, shape) if dtype == "int64" else torch.randn(shape)


def real_peak(factory, shapes, optimizer_name: str, *, dtypes=None, vocabulary: int = 2, dtype: str = "float32", loop: bool = False) -> int:
    """Peak bytes of two real training steps on CPU; `shapes`: one input shape per model argument,
    `dtypes`: "float32" or "int64" per argument; `dtype`: "float32" or an autocast ("bf16-autocast").

    The step is written two ways (`memlint estimate --step`). With `loop=True`, as people write it:
    `for x in loader: out = model(x); loss = ...; loss.backward(); optimizer.step()`, where the
    output, the loss and the batch stay alive through backward and the optimizer step and into the
    next forward (`--step loop`, the default). Without, the output is freed before backward and the
    batch after it (`--step lean`).

    The reference is the CPU allocator as torch.profiler sees it (profile_memory=True): every
    allocation and free, scratch inside kernels included, with no dispatch mode active, so the
    kernels run their eager paths.
    """
    torch.manual_seed(0)
    model = factory()
    optimizer = OPTIMIZERS[optimizer_name]([p for p in model.parameters() if p.requires_grad])
    dtypes = dtypes or ["float32"] * len(shapes)
    resident = sum(t.untyped_storage().nbytes() for t in [*model.parameters(), *model.buffers()])
    autocast = torch.autocast("cpu", dtype=AUTOCAST.get(dtype, torch.bfloat16), enabled=dtype in AUTOCAST)
    batches = ([_input(shape, kind, vocabulary) for shape, kind in zip(shapes, dtypes)] for _ in range(2))
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        if loop:
            for inputs in batches:  # written as people write it
                with autocast:
                    out = model(*inputs)
                    loss = _loss(out)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            del out, loss, inputs
        else:
            for inputs in batches:
                with autocast:
                    loss = _loss(model(*inputs))
                loss.backward()
                del inputs, loss
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"), key=lambda e: e.start_ns())
    live = peak = 0
    for event in events:
        live += event.nbytes()
        peak = max(peak, live)
    return resident + peak


def first_logit(output):
    """A custom loss for `memlint estimate --loss`."""
    return output[..., 0].mean()
