"""Compare `memlint estimate` with real CPU training steps, in the project's own environment; prints
the first table of docs/estimate-accuracy.md (the torchvision/timm tables come from
bench/estimate_zoo.py, which needs those packages).

    .venv/bin/python bench/estimate_accuracy.py

The reference is the CPU allocator (bench/estimate_reference.py): torch.profiler's memory events
(profile_memory=True) over two real training steps with no dispatch mode active, so the kernels run
their eager paths and scratch inside them is seen, plus the parameters and buffers that exist
before profiling starts. One thread, as the scratch oneDNN's kernels take depends on the thread
count. Each row is simulated and run with the same step convention (`--step`).
"""

from __future__ import annotations

import time

import estimate_reference as ref  # bench/estimate_reference.py, next to this file

from memlint.estimate.simulate import StepConfig, simulate

torch = ref.torch
F32, I64 = "float32", "int64"

# (model, factory, input shapes, input dtypes, optimizer, dtype, vocabulary)
ROWS = [
    ("Linear(256, 1024) on x.transpose(0, 1)", ref.TransposedLinear, [(64, 64, 256)], [F32], "sgd", F32, 2),
    ("GRU language model (embedding, 2xGRU(256), head on the batch-first output)", ref.GRULanguageModel, [(8, 64)], [I64], "adam", F32, 1000),
    ("CNN with a frozen backbone", ref.FrozenBackbone, [(8, 3, 64, 64)], [F32], "adam", F32, 2),
    ("CNN with a frozen backbone", ref.FrozenBackbone, [(8, 3, 64, 64)], [F32], "adam", "bf16-autocast", 2),
    ("MLP 256-1024-1024-10", ref.mlp, [(128, 256)], [F32], "adam", F32, 2),
    ("MLP 256-1024-1024-10", ref.mlp, [(128, 256)], [F32], "sgd-momentum", F32, 2),
    ("CNN conv-BN-ReLU x2", ref.cnn, [(16, 3, 32, 32)], [F32], "adam", F32, 2),
    ("CNN with pooling, batch 32 at 64x64", ref.wide_cnn, [(32, 3, 64, 64)], [F32], "adam", F32, 2),
    ("CNN with pooling, batch 32 at 64x64", ref.wide_cnn, [(32, 3, 64, 64)], [F32], "sgd-momentum", "bf16-autocast", 2),
    ("2 transformer encoder layers (d=128)", ref.Encoder, [(8, 64, 128)], [F32], "adam", F32, 2),
    ("2 transformer encoder layers (d=128)", ref.Encoder, [(8, 64, 128)], [F32], "adamw", "bf16-autocast", 2),
    ("stock nn.TransformerEncoder (deepcopy), 3 layers", ref.stock_encoder, [(8, 64, 128)], [F32], "adam", F32, 2),
    ("GPT with tied weights, 2 blocks (d=128)", ref.TinyGPT, [(8, 64)], [I64], "adamw", F32, 2000),
    ("GPT with tied weights, 2 blocks (d=128)", ref.TinyGPT, [(8, 64)], [I64], "sgd-momentum", F32, 2000),
    ("GPT with tied weights, 2 blocks (d=128)", ref.TinyGPT, [(8, 64)], [I64], "adamw", "bf16-autocast", 2000),
    ("nn.LSTM, 2 layers of 256", lambda: ref.Recurrent(ref.nn.LSTM), [(8, 64, 128)], [F32], "adam", F32, 2),
    ("nn.GRU, 2 layers of 256", lambda: ref.Recurrent(ref.nn.GRU), [(8, 64, 128)], [F32], "adam", F32, 2),
    ("U-Net, 16 channels", ref.UNet, [(2, 3, 64, 64)], [F32], "adam", F32, 2),
    ("image + text, two inputs (float32 and int64)", ref.ImageText, [(4, 3, 32, 32), (4, 16)], [F32, I64], "adam", F32, 1000),
    ("image + text, two inputs (float32 and int64)", ref.ImageText, [(4, 3, 32, 32), (4, 16)], [F32, I64], "sgd-momentum", "bf16-autocast", 1000),
]


def main() -> None:
    torch.set_num_threads(1)
    print(f"PyTorch {torch.__version__}, CPU, one thread.")
    print()
    print("| model | inputs | optimizer | dtype | step | estimated (B) | real (B) | error | estimate time (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for name, factory, shapes, dtypes, optimizer, dtype, vocabulary in ROWS:
        for step in ("lean", "loop"):
            config = StepConfig(tuple(shapes), input_dtypes=tuple(dtypes), optimizer=optimizer, dtype=dtype, vocabulary=vocabulary, step=step)
            started = time.perf_counter()
            estimate = simulate(factory, config)
            seconds = time.perf_counter() - started
            real = ref.real_peak(factory, shapes, optimizer, dtypes=dtypes, vocabulary=vocabulary, dtype=dtype, loop=step == "loop")
            error = (estimate.peak_bytes - real) / real
            worst = max(worst, abs(error))
            inputs = ", ".join(f"{'x'.join(map(str, s))} {d}" for s, d in zip(shapes, dtypes))
            print(
                f"| {name} | {inputs} | {optimizer} | {dtype} | {step} | {estimate.peak_bytes:,} | {real:,} | {error:+.3%} | {seconds:.1f} |",
                flush=True,
            )
    print()
    print(f"{2 * len(ROWS)} rows; largest error {worst:.3%}.")


if __name__ == "__main__":
    main()
