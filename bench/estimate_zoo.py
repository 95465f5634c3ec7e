"""`memlint estimate` on the models people train: a sweep over torchvision and timm, and a comparison
with real CPU training steps. Results go into docs/estimate-accuracy.md.

torchvision and timm are not dependencies of memlint; run this in a separate virtual environment
(torchvision must match its torch exactly), with this repository on PYTHONPATH:

    python3.11 -m venv zoo && zoo/bin/pip install torch==2.14.1 torchvision==0.29.1 timm
    PYTHONPATH=. nice -n 19 zoo/bin/python bench/estimate_zoo.py sweep   > zoo-sweep.md
    # or side by side: sweep all 1/4 > a.md, ..., sweep all 4/4 > d.md, then: merge a.md b.md c.md d.md
    PYTHONPATH=. nice -n 19 zoo/bin/python bench/estimate_zoo.py compare > zoo-compare.md

`sweep` estimates one AdamW training step of every torchvision classification, detection and
segmentation model and of a sample of timm architectures (one per timm module, the smallest-
sounding name, and a list of popular ones), batch 2 at each model's default resolution, on fake
tensors (the time of a fake step grows with the number of operators, not with their sizes). Each
model ends as "ok", as "cannot be simulated" with memlint's message, or as a crash (any other
exception: a bug in memlint). `compare` measures real CPU training steps of a dozen models with
torch.profiler (bench/estimate_reference.py, independent of memlint) beside the estimate.
"""

from __future__ import annotations

import copy
import os
import re
import signal
import sys
import time
import traceback
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # estimate_reference

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import torch
    from torch import nn

from estimate_reference import Recurrent, UNet, stock_encoder  # noqa: E402

from memlint.estimate.simulate import SimulationError, StepConfig, simulate  # noqa: E402

TIMEOUT = int(os.environ.get("ZOO_TIMEOUT", "300"))  # seconds per model (a loaded machine is slow)
BATCH = 2
SMALL = re.compile(r"(^|_)(pico|femto|atto|nano|tiny|mini|small|xs|s|b0|18|lite0|050|100|t)(_|$)")


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout(f"no result after {TIMEOUT} s")


# ---------------------------------------------------------------------------- models


class DetectionStep(nn.Module):
    """A torchvision detector's training step: images plus one box per image give a loss dict."""

    def __init__(self, model: nn.Module, kind: str) -> None:
        super().__init__()
        self.model, self.kind = model, kind

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        targets = []
        for image in images:
            height, width = image.shape[-2:]
            target = {"boxes": torch.tensor([[8.0, 8.0, 48.0, 40.0]]), "labels": torch.tensor([1])}
            if self.kind == "mask":
                target["masks"] = torch.zeros(1, height, width, dtype=torch.uint8)
            if self.kind == "keypoint":
                target["keypoints"] = torch.ones(1, 17, 3) * 16
            targets.append(target)
        losses = self.model(list(images), targets)
        return sum(losses.values())


def torchvision_models() -> list[tuple[str, object, tuple]]:
    import torchvision
    from torchvision import models

    found = []
    for name in models.list_models(module=models):
        size = 299 if name == "inception_v3" else 224
        kwargs = {"aux_logits": True, "init_weights": False} if name in ("inception_v3", "googlenet") else {}
        found.append((f"torchvision {name}", lambda name=name, kw=kwargs: models.get_model(name, weights=None, **kw), (BATCH, 3, size, size)))
    for name in models.list_models(module=models.segmentation):
        found.append((f"torchvision {name}", lambda name=name: models.get_model(name, weights=None, weights_backbone=None), (BATCH, 3, 224, 224)))
    for name in models.list_models(module=models.detection):
        kind = "mask" if "mask" in name else "keypoint" if "keypoint" in name else "box"
        size = 320 if "ssdlite" in name else 300 if "ssd" in name else 224

        def build(name=name, kind=kind):
            return DetectionStep(models.get_model(name, weights=None, weights_backbone=None), kind)

        found.append((f"torchvision {name}", build, (BATCH, 3, size, size)))
    del torchvision
    return found


# Architectures people train most, beside one per timm module.
POPULAR = (
    "resnet50", "efficientnet_b0", "convnext_tiny", "vit_small_patch16_224", "vit_base_patch16_224",
    "swin_tiny_patch4_window7_224", "deit_small_patch16_224", "regnety_016", "mobilenetv3_large_100",
    "efficientnetv2_rw_s", "resnext50_32x4d", "densenet121", "eva02_tiny_patch14_224", "maxvit_tiny_tf_224",
)  # fmt: skip


def timm_models() -> list[tuple[str, object, tuple]]:
    import timm

    picked = []
    for module in timm.list_modules():
        names = sorted(timm.list_models(module=module))
        small = [n for n in names if SMALL.search(n)]
        picked.append((small or names)[0])
    available = set(timm.list_models())
    picked += [name for name in POPULAR if name in available]
    found = []
    for name in dict.fromkeys(picked):
        config = timm.get_pretrained_cfg(name)
        size = tuple(config.input_size) if config and config.input_size else (3, 224, 224)
        found.append((f"timm {name}", lambda name=name: timm.create_model(name, pretrained=False), (BATCH, *size)))
    return found


def sweep(which: str = "all", shard: str = "1/1", *done: str) -> None:
    """`which`: all, torchvision or timm; `shard` K/N runs every Nth model from the Kth (processes
    side by side); models named in the `done` tables (earlier outputs) are skipped."""
    signal.signal(signal.SIGALRM, _alarm)
    torch.set_num_threads(1)
    import timm
    import torchvision

    zoo = (torchvision_models() if which in ("all", "torchvision") else []) + (timm_models() if which in ("all", "timm") else [])
    finished = {line.split("|")[1].strip() for path in done for line in Path(path).read_text().splitlines() if line.startswith("| t")}
    index, count = (int(part) for part in shard.split("/"))
    zoo = [entry for entry in zoo if entry[0] not in finished][index - 1 :: count]
    print("# `memlint estimate` over torchvision and timm")
    print()
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, timm {timm.__version__}; AdamW, fp32, batch {BATCH}.")
    print()
    print("| model | input | parameters | estimated peak (B) | seconds | outcome |")
    print("|---|---|---|---|---|---|")
    counts = {"ok": 0, "cannot be simulated": 0, "timed out": 0, "crash": 0}
    for name, factory, shape in zoo:
        print(f"{name} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        signal.alarm(TIMEOUT)
        params = peak = ""
        try:
            estimate = simulate(factory, StepConfig((shape,), optimizer="adamw"))
            params, peak, outcome = f"{estimate.params:,}", f"{estimate.peak_bytes:,}", "ok"
            if estimate.unsimulated:
                outcome += "; not simulated: " + "; ".join(estimate.unsimulated)
            counts["ok"] += 1
        except SimulationError as error:
            if isinstance(error.__cause__, Timeout):  # the machine's load, not the model
                outcome = f"timed out after {TIMEOUT} s"
                counts["timed out"] += 1
            else:
                outcome = "cannot be simulated: " + " ".join(str(error).split())[:300]
                counts["cannot be simulated"] += 1
        except Exception as error:  # a bug in memlint: the sweep's reason to exist
            outcome = f"CRASH: {type(error).__name__}: {' '.join(str(error).split())[:300]}"
            traceback.print_exc(file=sys.stderr)
            counts["crash"] += 1
        finally:
            signal.alarm(0)
        seconds = time.perf_counter() - started
        shown = "x".join(map(str, shape))
        print(f"| {name} | {shown} | {params} | {peak} | {seconds:.1f} | {outcome.replace('|', '/')} |", flush=True)
    print()
    print(f"{len(zoo)} models: " + ", ".join(f"{n} {k}" for k, n in counts.items()) + ".")


# ---------------------------------------------------------------------------- real steps


class EMA(nn.Module):
    """A model with an exponential-moving-average copy made by copy.deepcopy (frozen)."""

    def __init__(self) -> None:
        super().__init__()
        self.model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))
        self.ema = copy.deepcopy(self.model).requires_grad_(False)

    def forward(self, x):
        with torch.no_grad():
            target = self.ema(x)
        return (self.model(x) - target).square()


def compared_models() -> list[tuple[str, object, tuple]]:
    import timm
    from torchvision import models

    tv = lambda name, **kw: (lambda: models.get_model(name, weights=None, **kw))  # noqa: E731
    return [
        ("torchvision resnet18", tv("resnet18"), (4, 3, 64, 64)),
        ("torchvision mobilenet_v3_small", tv("mobilenet_v3_small"), (4, 3, 96, 96)),
        ("torchvision efficientnet_b0", tv("efficientnet_b0"), (2, 3, 96, 96)),
        ("torchvision densenet121", tv("densenet121"), (2, 3, 64, 64)),
        ("torchvision lraspp_mobilenet_v3_large (segmentation)", tv("lraspp_mobilenet_v3_large", weights_backbone=None), (2, 3, 96, 96)),
        ("timm vit_tiny_patch16_224 (ViT)", lambda: timm.create_model("vit_tiny_patch16_224", pretrained=False), (2, 3, 224, 224)),
        ("timm convnext_atto", lambda: timm.create_model("convnext_atto", pretrained=False), (2, 3, 96, 96)),
        ("U-Net (bench/estimate_reference.py)", UNet, (2, 3, 64, 64)),
        ("nn.LSTM, 2 layers of 256", lambda: Recurrent(nn.LSTM), (8, 64, 128)),
        ("nn.GRU, 2 layers of 256", lambda: Recurrent(nn.GRU), (8, 64, 128)),
        ("stock nn.TransformerEncoder (deepcopy), 3 layers", stock_encoder, (8, 64, 128)),
        ("MLP with a deepcopy EMA twin", EMA, (64, 64)),
    ]


def compare() -> None:
    from estimate_reference import real_peak

    import timm
    import torchvision

    torch.set_num_threads(1)
    print("| model | input | parameters | estimated (B) | real (B) | error |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for name, factory, shape in compared_models():
        print(f"{name} ...", file=sys.stderr, flush=True)
        estimate = simulate(factory, StepConfig((shape,), optimizer="adamw", step="lean"))
        real = real_peak(factory, (shape,), "adamw")
        error = (estimate.peak_bytes - real) / real
        worst = max(worst, abs(error))
        shown = "x".join(map(str, shape))
        print(f"| {name} | {shown} | {estimate.params:,} | {estimate.peak_bytes:,} | {real:,} | {error:+.3%} |", flush=True)
    print()
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, timm {timm.__version__}, CPU, one thread; "
          f"largest error {worst:.3%}.")  # fmt: skip


def merge(*paths: str) -> None:
    """One table from the tables of several `sweep` runs (shards), torchvision first, and the counts."""
    rows = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.startswith("| t"):
                rows[line.split("|")[1].strip()] = line
    ordered = sorted(rows.items(), key=lambda item: (not item[0].startswith("torchvision"), item[0]))
    print("| model | input | parameters | estimated peak (B) | seconds | outcome |")
    print("|---|---|---|---|---|---|")
    for _, line in ordered:
        print(line)
    outcomes = [line.rsplit("|", 2)[1].strip() for _, line in ordered]
    timed_out = ["timed out" in o or "Timeout: no result" in o for o in outcomes]
    counts = {
        "ok": sum(o.startswith("ok") for o in outcomes),
        "cannot be simulated": sum(o.startswith("cannot") and not t for o, t in zip(outcomes, timed_out)),
        "timed out": sum(timed_out),
        "crash": sum(o.startswith("CRASH") for o in outcomes),
    }
    families = {"torchvision": sum(n.startswith("torchvision") for n in rows), "timm": sum(n.startswith("timm") for n in rows)}
    print()
    print(f"{len(rows)} models ({families['torchvision']} torchvision, {families['timm']} timm): " + ", ".join(f"{n} {k}" for k, n in counts.items()) + ".")


if __name__ == "__main__":
    command, *rest = sys.argv[1:] or ["sweep"]
    {"sweep": sweep, "compare": compare, "merge": merge}[command](*rest)
