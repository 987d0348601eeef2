#!/usr/bin/python3
"""Exports torchvision classification models at small sizes, one for each
import path their ONNX needs: mobilenet_v2 (Clip), mobilenet_v3_small
(HardSwish, HardSigmoid), squeezenet1_1 (MaxPool with ceil_mode), densenet121
and inception_v3 (Pad, AveragePool counting its padding), efficientnet_b0,
and vit and swin in small configurations of torchvision's own classes
(Equal/Where/Expand of the class token's batch; Mod, ScatterND, Pad, strided
Slice of the shifted-window mask), maxvit small (Einsum), a module of
Einsum equations, and the segmentation model lraspp_mobilenet_v3_large (a
per-pixel class map [N, classes, H, W]: bilinear Resize of half pixels,
sigmoid-gated features). Each comes with an input batch and PyTorch's outputs on
it.

Batch norms' running statistics are calibrated on random batches first (the
scale a trained network's activations have): with the initial statistics,
random weights leave logits of 1e-13 (efficientnet) to 3e8 (inception),
outside f16's range either way. efficientnet_b0 is also exported
uncalibrated, as `efficientnet_raw`, with logits below f16's range: that
one is compared in bf16.

Usage: export-torchvision.py OUTDIR [NAME...]. Exits 77 (a skip) where
PyTorch or torchvision is missing."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch
    import torchvision
    from torchvision.models.maxvit import MaxVit
    from torchvision.models.swin_transformer import SwinTransformer
    from torchvision.models.vision_transformer import VisionTransformer
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)
import safetensors_io

M = torchvision.models
MODELS = {  # name: (constructor, image size, calibrate batch norms)
    "mobilenet_v2": (lambda: M.mobilenet_v2(num_classes=10), 32, True),
    "mobilenet_v3_small": (lambda: M.mobilenet_v3_small(num_classes=10), 32, True),
    "squeezenet1_1": (lambda: M.squeezenet1_1(num_classes=10), 48, True),
    "densenet121": (lambda: M.densenet121(num_classes=10), 32, True),
    "inception_v3": (lambda: M.inception_v3(num_classes=10, aux_logits=False,
                                            init_weights=True), 80, True),
    "efficientnet_b0": (lambda: M.efficientnet_b0(num_classes=10), 32, True),
    "efficientnet_raw": (lambda: M.efficientnet_b0(num_classes=10), 32, False),
    "vit": (lambda: VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                      hidden_dim=32, mlp_dim=64, num_classes=10), 32, False),
    "swin": (lambda: SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2],
                                     num_heads=[2, 4], window_size=[4, 4],
                                     num_classes=10), 32, False),
    "maxvit": (lambda: MaxVit(input_size=(32, 32), stem_channels=8, partition_size=2,
                              block_channels=[16, 32], block_layers=[1, 1], head_dim=8,
                              stochastic_depth_prob=0.0, num_classes=10), 32, True),
    "einsums": (lambda: Einsums(), 4, False),
    "lraspp": (lambda: M.segmentation.lraspp_mobilenet_v3_large(
        num_classes=5, weights_backbone=None), 64, True),
    "sdpa": (lambda: Sdpa(), 4, False),
}


class Sdpa(torch.nn.Module):
    """Attention in PyTorch's [batch, heads, seq, head_dim] layout, scaled
    after the product and causal-free: the 4-D form --fuse-attention takes."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 3 * 2 * 8)

    def forward(self, x):  # x: [2, 3, 4, 4] -> tokens [2, 12, 4]
        qkv = self.proj(x.reshape(2, 12, 4)).reshape(2, 12, 3, 2, 8).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        p = torch.softmax(q @ k.transpose(-2, -1) * 0.35, dim=-1)
        return (p @ v).transpose(1, 2).reshape(2, 12 * 16)


class Einsums(torch.nn.Module):
    """Einsum equations of each form the importer maps: a batched matmul with
    either operand transposed, merged label groups, a label summed away, an
    implicit output, one operand's transpose and sum."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 3, 5))

    def forward(self, x):  # x: [2, 3, 4, 4]
        h = x[:, :, :, 0]  # [2, 3, 4]
        parts = [torch.einsum("bij,bkj->bik", h, h),  # maxvit's q k^T
                 torch.einsum("bij,bjk->bik", h.transpose(1, 2), h),
                 torch.einsum("bcij,jck->bik", x, self.w),  # merged K = (j, c)
                 torch.einsum("bcij,cjk->kbi", x, self.w.transpose(0, 1)),
                 torch.einsum("bcij,bc", x, x[:, :, 0, 0]),  # implicit: "ij"
                 torch.einsum("bcij->jbc", x),
                 torch.einsum("bcij->cj", x)]
        return torch.cat([p.reshape(-1) for p in parts])


def dims(size):
    """An image's [H, W] from its side, or a clip's [T, H, W] as given."""
    return (size, size) if isinstance(size, int) else size


def build(name):
    make, size, calibrate = MODELS[name]
    model = make()
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.momentum = None  # the running statistics average every batch
        if isinstance(m, torch.nn.Linear) and not m.weight.any():
            torch.nn.init.normal_(m.weight, std=0.02)  # vit's head starts at zero
    if calibrate:
        model.train()
        with torch.no_grad():
            for _ in range(2):
                model(torch.randn(4, 3, *dims(size)))
    return model.eval(), size


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name in sys.argv[2:] or MODELS:
    torch.manual_seed(0)
    model, size = build(name)
    x = torch.randn(2, 3, size, size)
    # Batch norms kept (docs/onnx.md): folded into the convolutions, their
    # shift becomes a bias that cancels most of the convolution's output,
    # which an f16 convolution has rounded by then.
    torch.onnx.export(model, x, f"{out}/{name}.onnx", input_names=["x"], output_names=["y"],
                      opset_version=14, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE)
    with torch.no_grad():
        y = model(x)
    y = y["out"] if isinstance(y, dict) else y  # a segmentation model's {"out": map}
    safetensors_io.write(f"{out}/{name}.inputs.safetensors", {"x": x.numpy()})
    safetensors_io.write(f"{out}/{name}.expected.safetensors", {"y": y.numpy()})
print(f"exported {' '.join(sys.argv[2:] or MODELS)} to {out}")
