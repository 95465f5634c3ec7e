"""Compare `memlint estimate` with real training steps on a CUDA GPU: the CUDA table of
docs/estimate-accuracy.md.

    python bench/estimate_cuda.py            # needs a GPU; torchvision and timm add the zoo rows

The estimate is the same simulation as everywhere (fake tensors, CPU kernels, nothing allocated).
The reference is the GPU's caching allocator: `torch.cuda.max_memory_allocated()` over two real
training steps, written as in bench/estimate_reference.py (`real_peak`), minus what was allocated
before the model was built. It counts what the allocator hands out (each block rounded up to 512
bytes), the scratch that cuBLAS and cuDNN take through it included; it leaves out the CUDA context
and the allocator's cached-but-free blocks, which `estimate` covers with its reserve.

cuBLAS keeps one workspace per handle for the life of the process; it is allocated by the first
matrix product and then stays. The script makes it before the first row (and reports its size), so
that every row is measured alike, with it already in place and outside the figure.
"""

from __future__ import annotations

import gc
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # estimate_reference, estimate_accuracy

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import torch

import estimate_accuracy  # noqa: E402
import estimate_reference as ref  # noqa: E402

from memlint.estimate.simulate import StepConfig, simulate  # noqa: E402


def _input(shape, kind: str, vocabulary: int) -> torch.Tensor:
    if kind == "int64":
        return torch.randint(0, vocabulary, shape, device="cuda")
    return torch.randn(shape, device="cuda")


def cuda_peak(factory, shapes, optimizer_name: str, *, dtypes, vocabulary: int, dtype: str, loop: bool) -> int:
    """Peak bytes the caching allocator handed out over two real training steps on the GPU."""
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(0)
    model = factory().cuda()
    optimizer = ref.OPTIMIZERS[optimizer_name]([p for p in model.parameters() if p.requires_grad])
    autocast = torch.autocast("cuda", dtype=ref.AUTOCAST.get(dtype, torch.bfloat16), enabled=dtype in ref.AUTOCAST)
    batches = ([_input(shape, kind, vocabulary) for shape, kind in zip(shapes, dtypes)] for _ in range(2))
    if loop:  # the output, the loss and the batch live on into the next step, as people write it
        for inputs in batches:
            with autocast:
                out = model(*inputs)
                loss = ref._loss(out)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        del out, loss, inputs
    else:
        for inputs in batches:
            with autocast:
                loss = ref._loss(model(*inputs))
            loss.backward()
            del inputs, loss
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    del model, optimizer
    return peak


def _rows():
    for name, factory, shapes, dtypes, optimizer, dtype, vocabulary in estimate_accuracy.ROWS:
        for step in ("lean", "loop"):
            yield name, factory, shapes, dtypes, optimizer, dtype, vocabulary, step
    try:
        import estimate_zoo

        zoo = estimate_zoo.compared_models()
    except ImportError as error:  # torchvision or timm missing: the rows above still stand
        print(f"zoo rows left out: {error}", file=sys.stderr)
        return
    for name, factory, shape in zoo:
        yield name, factory, [shape], ["float32"], "adamw", "float32", 2, "lean"
    from torchvision import models

    for name, batch in (("resnet50", 32), ("vit_b_16", 16)):  # sizes people train at
        yield f"torchvision {name}", (lambda name=name: models.get_model(name, weights=None)), [(batch, 3, 224, 224)], ["float32"], "adamw", "float32", 2, "loop"
        yield f"torchvision {name}", (lambda name=name: models.get_model(name, weights=None)), [(batch, 3, 224, 224)], ["float32"], "adamw", "bf16-autocast", 2, "loop"


def _workspace_bytes() -> int:
    """Make cuBLAS's per-handle workspace (and cuDNN's handle) now; what stays allocated is it."""
    before = torch.cuda.memory_allocated()
    a = torch.randn(256, 256, device="cuda", requires_grad=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        (a @ a).sum().backward()
    (a @ a).sum().backward()
    conv = torch.nn.Conv2d(3, 8, 3).cuda()
    conv(torch.randn(1, 3, 8, 8, device="cuda")).sum().backward()
    del a, conv
    gc.collect()
    torch.cuda.synchronize()
    return torch.cuda.memory_allocated() - before


def main() -> int:
    if not torch.cuda.is_available():
        print("no CUDA device: this comparison needs a GPU", file=sys.stderr)
        return 2
    workspace = _workspace_bytes()
    print(f"PyTorch {torch.__version__}, {torch.cuda.get_device_name()}; cuBLAS workspace made before the rows: {workspace:,} B.")
    print()
    print("| model | inputs | optimizer | dtype | step | estimated (B) | real CUDA (B) | error |")
    print("|---|---|---|---|---|---|---|---|")
    errors = []
    for name, factory, shapes, dtypes, optimizer, dtype, vocabulary, step in _rows():
        started = time.perf_counter()
        config = StepConfig(tuple(map(tuple, shapes)), input_dtypes=tuple(dtypes), optimizer=optimizer, dtype=dtype, vocabulary=vocabulary, step=step)
        try:
            estimate = simulate(factory, config).peak_bytes
            real = cuda_peak(factory, shapes, optimizer, dtypes=dtypes, vocabulary=vocabulary, dtype=dtype, loop=step == "loop")
        except Exception as error:  # noqa: BLE001 - one failing row must not hide the others
            print(f"| {name} | | {optimizer} | {dtype} | {step} | failed: {type(error).__name__}: {error} | | |", flush=True)
            continue
        error = (estimate - real) / real
        errors.append(error)
        inputs = ", ".join(f"{'x'.join(map(str, s))} {d}" for s, d in zip(shapes, dtypes))
        print(f"| {name} | {inputs} | {optimizer} | {dtype} | {step} | {estimate:,} | {real:,} | {error:+.2%} |", flush=True)
        print(f"{name} {step} {dtype}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    if errors:
        within = sum(abs(e) <= 0.05 for e in errors)
        print()
        print(f"{len(errors)} rows; {within} within 5%; largest under-estimate {min(errors):+.2%}, largest over-estimate {max(errors):+.2%}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
