"""Compare `memlint estimate` with real CPU training steps, in the project's own environment; prints
the first table of docs/estimate-accuracy.md (the torchvision/timm tables come from
bench/estimate_zoo.py, which needs those packages).

    .venv/bin/python bench/estimate_accuracy.py

The real peak is measured independently of memlint (bench/estimate_reference.py): torch.profiler's
allocation events over two real training steps, plus the parameters and buffers that exist before
profiling starts. One thread, as the scratch oneDNN's kernels take depends on the thread count.
"""

from __future__ import annotations

import time

from estimate_reference import CASES, OPTIMIZERS, real_peak, torch  # bench/estimate_reference.py, next to this file

from memlint.estimate.simulate import StepConfig, simulate


def main() -> None:
    torch.set_num_threads(1)
    print(f"PyTorch {torch.__version__}, CPU, one thread.")
    print()
    print("| model | input | optimizer | estimated (B) | real (B) | error | estimate time (s) |")
    print("|---|---|---|---|---|---|---|")
    for name, factory, shape in CASES:
        for optimizer in OPTIMIZERS:
            if optimizer == "adamw":
                continue  # the zoo comparison uses AdamW; these rows keep Adam and SGD with momentum
            started = time.perf_counter()
            estimate = simulate(factory, StepConfig((shape,), optimizer=optimizer))
            seconds = time.perf_counter() - started
            real = real_peak(factory, (shape,), optimizer)
            error = (estimate.peak_bytes - real) / real
            shown = "x".join(map(str, shape))
            print(f"| {name} | {shown} | {optimizer} | {estimate.peak_bytes:,} | {real:,} | {error:+.2%} | {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
