"""The step-time breakdown of ampc and PyTorch side by side: kernel time per
step sorted into the same categories on both sides (from ampc-plan-run
--profile's per-kernel times and from torch.profiler's CUDA kernels), plus
the time between kernels, drawn as one SVG of stacked bars
(docs/performance.md). No plotting library: the GPU machine has none."""
import re

CATEGORIES = [
    ("GEMM and convolution", "#4e79a7"),
    ("norms and softmax", "#59a14f"),
    ("elementwise and other", "#f28e2b"),
    ("optimizer", "#b07aa1"),
    ("AMP bookkeeping", "#e15759"),
    ("between kernels", "#bab0ac"),
]

AMPC = [
    (r"^(matmul|conv2d)", 0),
    (r"(layer_norm|batch_norm|softmax|cross_entropy)", 1),
    (r"^(sgd|momentum|adam|count_step|restore_if_skipped)$", 3),
    (r"^(cast|check_finite.*|update_loss_scaling)$", 4),
]

# PyTorch's CUDA kernel names (cuBLAS, CUTLASS, cuDNN, ATen, Triton), the
# first rule that matches: GradScaler's unscale also runs as a
# multi_tensor_apply kernel, so the AMP rule comes before the optimizer's.
TORCH = [
    (r"(amp_|unscale|non_finite|nonfinite|update_scale)", 4),
    (r"(gemm|cutlass|xmma|cublas|sm\d+_|conv|implicit_convolve|dgrad|wgrad|cudnn)", 0),
    (r"(layer_norm|LayerNorm|batch_norm|BatchNorm|softmax|SoftMax|bn_|welford)", 1),
    (r"(multi_tensor_apply|fused_optimizer|adam|sgd)", 3),
]


def category(name, rules):
    for pattern, index in rules:
        if re.search(pattern, name, re.IGNORECASE):
            return index
    return 2


def split(kernel_ms, rules, step_ms):
    """Milliseconds per step per category: kernels by their rule, the rest
    of the step between kernels."""
    out = [0.0] * len(CATEGORIES)
    for name, ms in kernel_ms.items():
        out[category(name, rules)] += ms
    out[5] = max(0.0, step_ms - sum(out))
    return out


def ampc_split(profile):
    """From the `profile` of ampc-plan-run --metrics-json."""
    return split(profile["kernel_ms_per_step"], AMPC, profile["run_ms_per_step"])


def torch_split(entry):
    """From torch_gpu.py's profile entry: kernel ms per step and step ms."""
    return split(entry["kernel_ms_per_step"], TORCH, entry["step_ms"])


def svg(rows, title):
    """Stacked horizontal bars: rows are (label, ms per category)."""
    width, left, bar, gap, top = 760, 200, 26, 14, 40
    longest = max((sum(ms) for _, ms in rows), default=1.0) or 1.0
    scale = (width - left - 20) / longest
    height = top + len(rows) * (bar + gap) + 30 + 20 * ((len(CATEGORIES) + 2) // 3)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<text x="10" y="20" font-size="14">{title}</text>']
    for r, (label, ms) in enumerate(rows):
        y, x = top + r * (bar + gap), left
        out.append(f'<text x="10" y="{y + bar * 0.7:.0f}">{label} ({sum(ms):.2f} ms)</text>')
        for (name, color), value in zip(CATEGORIES, ms):
            w = value * scale
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar}" '
                       f'fill="{color}"><title>{name}: {value:.3f} ms</title></rect>')
            x += w
    y = top + len(rows) * (bar + gap) + 10
    for i, (name, color) in enumerate(CATEGORIES):
        x, yy = 10 + (i % 3) * 250, y + (i // 3) * 20
        out.append(f'<rect x="{x}" y="{yy}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{x + 18}" y="{yy + 11}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
