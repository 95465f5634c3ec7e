"""memlint's rule catalogue: one package per rule, named after its code (`ml001_accumulated_graph/`, the
rule class in its `rule.py`).

CATALOGUE names every built-in rule (code, name, on by default, folder) so that choosing rules and
deciding which files need analysis import neither the rules nor libcst (about 0.2 s of start-up);
tests/test_registry.py checks it against the rule classes.
"""

CATALOGUE = (
    ("ML001", "accumulated-graph", True, "ml001_accumulated_graph"),
    ("ML002", "eval-without-no-grad", True, "ml002_eval_without_no_grad"),
    ("ML003", "activation-not-inplace", True, "ml003_activation_not_inplace"),
    ("ML004", "retained-intermediates", True, "ml004_retained_intermediates"),
    ("ML005", "oversized-linear-after-flatten", True, "ml005_oversized_linear_after_flatten"),
    ("ML006", "optimizer-over-budget", True, "ml006_optimizer_over_budget"),
    ("ML007", "checkpoint-misuse", True, "ml007_checkpoint_misuse"),
    ("ML008", "eval-loader-full-batch", True, "ml008_eval_loader_full_batch"),
    ("ML009", "cache-flush-in-loop", True, "ml009_cache_flush_in_loop"),
    ("ML010", "float64-training", True, "ml010_float64_training"),
    ("ML011", "retain-graph-in-loop", True, "ml011_retain_graph_in_loop"),
    ("ML012", "zero-grad-keeps-buffers", True, "ml012_zero_grad_keeps_buffers"),
    ("ML013", "host-then-device", True, "ml013_host_then_device"),
    ("ML014", "device-outputs-accumulated", True, "ml014_device_outputs_accumulated"),
    ("ML015", "pure-half-precision-training", True, "ml015_pure_half_precision_training"),
    ("ML016", "deprecated-amp-api", True, "ml016_deprecated_amp_api"),
    ("ML017", "training-without-mixed-precision", False, "ml017_training_without_mixed_precision"),
)
