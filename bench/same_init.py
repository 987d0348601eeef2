"""Trains a PyTorch peer of a zoo model from a seeded init, and writes that
init and its batch in ampc's names and layouts, so that ampc trains from the
same start (`ampc-plan-run PLAN STEPS --init-from M.init.safetensors --data
M.data.safetensors`) and the two losses can be compared (docs/performance.md,
"Same start").

Usage: python3 bench/same_init.py MODEL DIR [--steps N] [--mode f32|amp]
       [--device cpu|cuda] [--set key=value ...]
MODEL: simplenet, mnist_cnn, bert, gpt2 or llama, with the zoo's `--set`
keys (simplenet: batch, hidden; mnist_cnn: batch; bert and gpt2: batch,
layers, hidden, heads, seq, vocab; llama also kv_heads, ffn, norm_eps, qkv_bias,
tie, rope_theta, rope_scaling and lora, lora_alpha, lora_targets: PEFT's
adapters, the rest frozen). Writes DIR/MODEL.init.safetensors and DIR/MODEL.data.safetensors
before training, then one JSON line, printed and in DIR/MODEL.peer.json: the
model, the mode and the loss of every step (each the loss its forward
computed, before its update).
SGD (lr 0.01) for simplenet and mnist_cnn, AdamW (lr 1e-4, weight decay 0.01)
for bert, gpt2 and llama, unless --optimizer picks another (with --lr, --weight-decay,
--momentum, --nesterov, --betas, --eps, as ampc's flags of those names; --alpha,
--centered, --initial-accumulator as ampc's --rmsprop-alpha, --rmsprop-centered,
--adagrad-init; lamb and lion: bench/lamb.py's and bench/lion.py's) and
--clip-grad-norm X (clip_grad_norm_ after the unscale, its norms recorded as
"grad_norms") and --lr-schedule one of ampc's schedules (onecycle: OneCycleLR with its
defaults but cycle_momentum; step: StepLR; polynomial without warmup or --min-lr:
PolynomialLR; cosine_with_restarts without warmup, N cycles dividing the steps:
CosineAnnealingWarmRestarts; the others, and these with warmup: LambdaLR of Hugging
Face's formulas after ampc's warmup); the peer then also records the rate of every
step ("lrs").
--freeze P and --train-only P freeze the peer's params as ampc's flags do
(requires_grad False), by PyTorch's names: globs that match a name or a
module of it; --lr-scale P=F puts the params P matches (the first pattern
that does) in a param group of F times the rate. --label-smoothing E and
--ignore-index N are cross_entropy's (N -100 by default, as PyTorch's);
--ignored-share F sets that share of the labels to N at random;
--class-weights W0,W1,... is cross_entropy's weight=. --ema-decay D keeps
timm's ModelEmaV2 of the trained params (a copy of the init, `lerp_` towards
the params by 1 - d after each applied step; --ema-warmup: d = min(D,
(1 + n) / (10 + n)) after n steps) and writes it, in ampc's names, to
DIR/MODEL.ema.safetensors. `f32` (the default) is true f32 (no TF32), as ampc's O0; `amp`
(on a GPU) autocast f16 with GradScaler (init scale 65536), as ampc's O1."""
import argparse
import copy
import fnmatch
import json
import struct

import torch
import torch.nn.functional as F

from lamb import Lamb
from lion import Lion
from peer_schedules import schedule
from torch_models import LLAMA_LINEARS, Bert, Gpt2, Llama, LoraLinear, MnistCnn, add_lora, mlp

SHAPES = {
    "simplenet": {"batch": 512, "hidden": 4096},
    "mnist_cnn": {"batch": 64},
    "bert": {"batch": 32, "layers": 12, "hidden": 768, "heads": 12, "seq": 128, "vocab": 30528},
    "gpt2": {"batch": 16, "layers": 12, "hidden": 768, "heads": 12, "seq": 1024, "vocab": 50304},
    "llama": {"batch": 16, "layers": 12, "hidden": 768, "heads": 12, "kv_heads": 4, "ffn": 2048,
              "seq": 1024, "vocab": 32000, "norm_eps": 1e-5, "qkv_bias": 0, "tie": 0,
              "rope_theta": 10000, "rope_scaling": "none", "lora": 0, "lora_alpha": 8.0,
              "lora_targets": "q,v"},
}
DTYPES = {torch.float32: "F32", torch.int64: "I64"}
# cross_entropy's label_smoothing, ignore_index and weight (--label-smoothing,
# --ignore-index, --class-weights).
CROSS_ENTROPY = {}


def cross_entropy(logits, labels):
    return F.cross_entropy(logits, labels, **CROSS_ENTROPY)


def save_safetensors(path, tensors):
    """The safetensors format: a little-endian u64 header size, the JSON
    header, then each tensor's bytes (written without the library)."""
    header, offset, blobs = {}, 0, []
    for name, t in tensors.items():
        t = t.detach().to("cpu").contiguous()
        data = t.numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            f.write(blob)


def linear(prefix, layer):
    """A Linear layer: ampc's matmul reads [in, out]."""
    return {prefix + ".w": layer.weight.t(), prefix + ".b": layer.bias}


def norm(prefix, layer):
    return {prefix + ".scale": layer.weight, prefix + ".bias": layer.bias}


def simplenet_weights(model, shape):
    out = {}
    for i, index in enumerate((0, 2, 4)):
        out.update(linear("fc%d" % (i + 1), model[index]))
    return out


def mnist_cnn_weights(model, shape):
    out = {}
    for i, (conv, bn) in enumerate(((model.conv1, model.bn1), (model.conv2, model.bn2))):
        out["conv%d.w" % (i + 1)] = conv.weight.permute(0, 2, 3, 1)  # OIHW -> OHWI
        out.update(norm("bn%d" % (i + 1), bn))
        out["bn%d.running_mean" % (i + 1)] = bn.running_mean
        out["bn%d.running_var" % (i + 1)] = bn.running_var
    # ampc flattens NHWC activations (h, w, c); PyTorch NCHW ones (c, h, w).
    fc1 = model.fc1.weight.view(64, 64, 7, 7).permute(0, 2, 3, 1).reshape(64, -1)
    out["fc1.w"], out["fc1.b"] = fc1.t(), model.fc1.bias
    out.update(linear("fc2", model.fc2))
    return out


def bert_weights(model, shape):
    h = shape["hidden"]
    out = {"embeddings.word.w": model.word.weight, "embeddings.position.w": model.position}
    out.update(norm("embeddings.norm", model.norm))
    for i, layer in enumerate(model.encoder.layers):
        p = "encoder.layer%d." % i
        attn = layer.self_attn
        for k, name in enumerate("qkv"):  # in_proj stacks q, k and v
            out[p + "attn.%s.w" % name] = attn.in_proj_weight[k * h:(k + 1) * h].t()
            out[p + "attn.%s.b" % name] = attn.in_proj_bias[k * h:(k + 1) * h]
        out.update(linear(p + "attn.out", attn.out_proj))
        out.update(norm(p + "attn.norm", layer.norm1))
        out.update(linear(p + "ffn.fc1", layer.linear1))
        out.update(linear(p + "ffn.fc2", layer.linear2))
        out.update(norm(p + "ffn.norm", layer.norm2))
    out.update(linear("mlm.transform", model.transform))
    out.update(norm("mlm.norm", model.head_norm))
    out["mlm.decoder.b"] = model.decoder_b
    return out


def gpt2_weights(model, shape):
    h = shape["hidden"]
    out = {"embeddings.token.w": model.wte.weight, "embeddings.position.w": model.wpe.weight}
    for i, block in enumerate(model.h):
        p = "layer%d." % i
        out.update(norm(p + "attn.norm", block.ln_1))
        for k, name in enumerate("qkv"):  # c_attn stacks q, k and v
            out[p + "attn.%s.w" % name] = block.c_attn.weight[k * h:(k + 1) * h].t()
            out[p + "attn.%s.b" % name] = block.c_attn.bias[k * h:(k + 1) * h]
        out.update(linear(p + "attn.out", block.attn_proj))
        out.update(norm(p + "mlp.norm", block.ln_2))
        out.update(linear(p + "mlp.fc1", block.c_fc))
        out.update(linear(p + "mlp.fc2", block.mlp_proj))
    out.update(norm("head.norm", model.ln_f))
    return out


def llama_weights(model, shape):
    out = {"embeddings.token.w": model.embed_tokens.weight, "head.norm.scale": model.norm.weight}
    if not shape["tie"]:
        out["head.logits.w"] = model.lm_head.weight.t()
    names = LLAMA_LINEARS
    for i, block in enumerate(model.layers):
        p = "layer%d." % i
        out[p + "attn.norm.scale"] = block.input_layernorm.weight
        out[p + "mlp.norm.scale"] = block.post_attention_layernorm.weight
        for ours, theirs in names.items():
            part = "mlp." if ours in ("gate", "up", "down") else "attn."
            out[p + part + ours + ".w"] = getattr(block, theirs).weight.t()
            if getattr(block, theirs).bias is not None:
                out[p + part + ours + ".b"] = getattr(block, theirs).bias
            if isinstance(getattr(block, theirs), LoraLinear):
                out[p + part + ours + ".lora_a"] = getattr(block, theirs).lora_A.weight.t()
                out[p + part + ours + ".lora_b"] = getattr(block, theirs).lora_B.weight.t()
    return out


def hugging_face_weights(model, name, vocab):
    """The model's weights as a Hugging Face checkpoint on the Hub names and
    lays them out (GPT2LMHeadModel's without a prefix, its Conv1D weights
    [in, out] and q, k, v stacked in c_attn, and 1024 positions; LlamaForCausalLM's
    under `model.`, Linear weights [out, in]), the tables cut to `vocab` rows:
    the zoo pads the vocabulary (`ampc train --init-layout hf`)."""
    with torch.no_grad():  # rows past `vocab` start at 0 on both sides
        table = model.wte.weight if name == "gpt2" else model.embed_tokens.weight
        table[vocab:] = 0
        if name == "llama" and model.lm_head.weight is not table:
            model.lm_head.weight[vocab:] = 0
    if name == "gpt2":
        extra = torch.randn(1024 - model.wpe.weight.shape[0], model.wpe.weight.shape[1])
        out = {"wte.weight": model.wte.weight[:vocab],
               "wpe.weight": torch.cat((model.wpe.weight, extra)),
               "ln_f.weight": model.ln_f.weight, "ln_f.bias": model.ln_f.bias}
        for i, b in enumerate(model.h):
            p = "h.%d." % i
            for theirs, ours in (("ln_1", b.ln_1), ("ln_2", b.ln_2)):
                out[p + theirs + ".weight"], out[p + theirs + ".bias"] = ours.weight, ours.bias
            for theirs, ours in (("attn.c_attn", b.c_attn), ("attn.c_proj", b.attn_proj),
                                 ("mlp.c_fc", b.c_fc), ("mlp.c_proj", b.mlp_proj)):
                out[p + theirs + ".weight"] = ours.weight.t()  # Conv1D: [in, out]
                out[p + theirs + ".bias"] = ours.bias
            out[p + "attn.bias"] = torch.ones(1, 1, 4, 4)  # the mask buffer, ignored
        return out
    out = {"model.embed_tokens.weight": model.embed_tokens.weight[:vocab],
           "model.norm.weight": model.norm.weight}
    if model.lm_head.weight is not model.embed_tokens.weight:  # a tied model stores none
        out["lm_head.weight"] = model.lm_head.weight[:vocab]
    for i, b in enumerate(model.layers):
        p = "model.layers.%d." % i
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            out[p + "self_attn." + proj + ".weight"] = getattr(b, proj).weight
            if getattr(b, proj).bias is not None:
                out[p + "self_attn." + proj + ".bias"] = getattr(b, proj).bias
        for proj in ("gate_proj", "up_proj", "down_proj"):
            out[p + "mlp." + proj + ".weight"] = getattr(b, proj).weight
        out[p + "input_layernorm.weight"] = b.input_layernorm.weight
        out[p + "post_attention_layernorm.weight"] = b.post_attention_layernorm.weight
    return out


def rope_scaling(text):
    """The zoo's rope_scaling: none, or llama3:FACTOR,LOW,HIGH,ORIGINAL."""
    return None if text == "none" else tuple(float(v) for v in text.split(":")[1].split(","))


def build(name, shape, device):
    """(model, its weights in ampc's names, the batch in ampc's input names
    and PyTorch's, the loss, the optimizer)."""
    b = shape["batch"]
    if name == "simplenet":
        n = shape["hidden"]
        model = mlp(n, n, n).to(device)
        x, y = torch.randn(b, n, device=device), torch.randn(b, n, device=device)
        return (model, simplenet_weights, {"x": x, "target": y}, x, y, F.mse_loss,
                torch.optim.SGD(model.parameters(), lr=0.01))
    if name == "mnist_cnn":
        model = MnistCnn().to(device).to(memory_format=torch.channels_last)
        x = torch.randn(b, 784, device=device)
        y = torch.randint(0, 10, (b,), device=device)
        return (model, mnist_cnn_weights, {"x": x.view(b, 28, 28, 1), "labels": y}, x, y,
                cross_entropy, torch.optim.SGD(model.parameters(), lr=0.01))
    if name == "llama":
        model, weights, labels = Llama(shape["layers"], shape["hidden"], shape["heads"],
                                       shape["kv_heads"], shape["ffn"], shape["seq"],
                                       shape["vocab"], qkv_bias=bool(shape["qkv_bias"]),
                                       tie=bool(shape["tie"]), eps=shape["norm_eps"],
                                       theta=float(shape["rope_theta"]),
                                       rope_scaling=rope_scaling(shape["rope_scaling"])).to(device), \
            llama_weights, "targets"
        if shape["lora"]:
            targets = list(LLAMA_LINEARS) if shape["lora_targets"] == "all" else \
                shape["lora_targets"].split(",")
            model = add_lora(model, targets, shape["lora"], shape["lora_alpha"]).to(device)
    else:
        kind, weights, labels = (Gpt2, gpt2_weights, "targets") if name == "gpt2" else \
            (Bert, bert_weights, "labels")
        model = kind(shape["layers"], shape["hidden"], shape["heads"], shape["seq"],
                     shape["vocab"]).to(device)
    ids = torch.randint(0, shape["vocab"], (b, shape["seq"]), device=device)
    y = torch.randint(0, shape["vocab"], (b, shape["seq"]), device=device)
    loss = lambda logits, labels: cross_entropy(logits.flatten(0, 1), labels.flatten())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    return model, weights, {"ids": ids, labels: y}, ids, y, loss, opt


def optimizer(args, model, default):
    """--optimizer's optimizer over the model's params, or `default`."""
    if not args.optimizer:
        return default
    params, lr, wd = param_groups(args, model), args.lr, args.weight_decay
    if args.no_decay_1d:  # nanoGPT's groups: only matrices (and tables) decay
        wd = wd if wd is not None else 0.01
    if args.optimizer == "sgd":
        return torch.optim.SGD(params, lr=lr, weight_decay=wd)
    if args.optimizer == "momentum":
        momentum = 0.9 if args.momentum is None else args.momentum
        return torch.optim.SGD(params, lr=lr, momentum=momentum, nesterov=args.nesterov,
                               weight_decay=wd)
    if args.optimizer == "lamb":  # decay 0.01 by default; no trust ratio where it is off
        for group in params:     # by --no-decay-1d, as ampc's
            group["adapt"] = group.get("weight_decay") != 0.0
        eps = 1e-6 if args.eps is None else args.eps
        return Lamb(params, lr=lr, betas=tuple(args.betas or (0.9, 0.999)), eps=eps,
                    weight_decay=wd if wd is not None else 0.01, splits=stacked_qkv(model))
    if args.optimizer == "lion":
        betas = tuple(args.betas) if args.betas else (0.9, 0.99)
        return Lion(params, lr=lr, betas=betas, weight_decay=wd)
    if args.optimizer == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr, alpha=args.alpha,
                                   eps=1e-8 if args.eps is None else args.eps, weight_decay=wd,
                                   momentum=args.momentum or 0.0, centered=args.centered)
    if args.optimizer == "adagrad":
        return torch.optim.Adagrad(params, lr=lr, eps=1e-10 if args.eps is None else args.eps,
                                   weight_decay=wd,
                                   initial_accumulator_value=args.initial_accumulator)
    kind = torch.optim.Adam if args.optimizer == "adam" else torch.optim.AdamW
    eps = 1e-8 if args.eps is None else args.eps
    return kind(params, lr=lr, betas=tuple(args.betas or (0.9, 0.999)), eps=eps,
                weight_decay=wd if args.weight_decay is not None or args.optimizer == "adam"
                else 0.01)


def stacked_qkv(model):
    """The params that stack q, k and v, which ampc keeps apart: {param: 3}."""
    stacked = {}
    for module in model.modules():
        if isinstance(module, torch.nn.MultiheadAttention):
            stacked.update({module.in_proj_weight: 3, module.in_proj_bias: 3})
        if hasattr(module, "c_attn"):
            stacked.update({module.c_attn.weight: 3, module.c_attn.bias: 3})
    return stacked


def matches(patterns, name):
    """Whether one of ampc's param patterns matches `name`: a glob over the
    name or a module of it (the name up to a dot)."""
    parts = name.split(".")
    modules = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatchcase(m, p) for p in patterns for m in modules)


def freeze(args, model):
    """--freeze and --train-only as ampc's."""
    for name, p in model.named_parameters():
        if matches(args.freeze, name) or (args.train_only and not matches(args.train_only, name)):
            p.requires_grad_(False)


def param_groups(args, model):
    """The params in groups of their --lr-scale factor (ampc's: the first
    pattern that matches) and, with --no-decay-1d, of their decay."""
    scales = [item.rsplit("=", 1) for item in args.lr_scale]
    groups = {}
    for name, p in model.named_parameters():
        factor = next((float(f) for pattern, f in scales if matches([pattern], name)), 1.0)
        decays = not args.no_decay_1d or p.dim() >= 2
        groups.setdefault((factor, decays), []).append(p)
    result = []
    for (factor, decays), params in groups.items():
        group = {"params": params, "lr": args.lr * factor, "lr_factor": factor}
        if not decays:
            group["weight_decay"] = 0.0
        result.append(group)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", choices=sorted(SHAPES))
    parser.add_argument("dir")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--mode", choices=("f32", "amp"), default="f32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--optimizer", choices=("sgd", "momentum", "adam", "adamw", "lamb",
                                                "lion", "rmsprop", "adagrad"))
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--weight-decay", type=float)
    parser.add_argument("--momentum", type=float, help="0.9, rmsprop's 0")
    parser.add_argument("--alpha", type=float, default=0.99, help="rmsprop's")
    parser.add_argument("--centered", action="store_true", help="rmsprop's")
    parser.add_argument("--initial-accumulator", type=float, default=0.0, help="adagrad's")
    parser.add_argument("--nesterov", action="store_true")
    parser.add_argument("--betas", type=float, nargs=2, help="0.9 0.999, lion's 0.9 0.99")
    parser.add_argument("--eps", type=float, help="1e-8, lamb's 1e-6, adagrad's 1e-10")
    parser.add_argument("--lr-schedule", choices=("constant", "cosine", "linear", "onecycle",
                                                  "step", "polynomial", "cosine_with_restarts",
                                                  "inverse_sqrt", "warmup_stable_decay"),
                        default="constant")
    parser.add_argument("--warmup-steps", type=int, default=0)
    parser.add_argument("--min-lr", type=float, default=0.0)
    parser.add_argument("--lr-step-every", type=int, default=1)
    parser.add_argument("--lr-gamma", type=float, default=0.1)
    parser.add_argument("--lr-power", type=float, default=1.0)
    parser.add_argument("--lr-cycles", type=int, default=1)
    parser.add_argument("--lr-decay-steps", type=int, default=0)
    parser.add_argument("--total-steps", type=int)
    parser.add_argument("--clip-grad-norm", type=float)
    parser.add_argument("--no-decay-1d", action="store_true")
    parser.add_argument("--freeze", action="append", default=[], metavar="PATTERN")
    parser.add_argument("--train-only", action="append", default=[], metavar="PATTERN")
    parser.add_argument("--lr-scale", action="append", default=[], metavar="PATTERN=FACTOR")
    parser.add_argument("--label-smoothing", type=float, default=0.0)
    parser.add_argument("--ignore-index", type=int, default=-100)
    parser.add_argument("--ignored-share", type=float, default=0.0, help="labels set to "
                        "--ignore-index at random, this share of them (seeded)")
    parser.add_argument("--class-weights", help="W0,W1,...: cross_entropy's weight=")
    parser.add_argument("--ema-decay", type=float, help="a moving average of the weights")
    parser.add_argument("--ema-warmup", action="store_true")
    parser.add_argument("--hf-vocab", type=int, help="gpt2 and llama: also write "
                        "MODEL.hf.safetensors, the weights as a Hugging Face checkpoint "
                        "of this vocabulary")
    args = parser.parse_args()
    if args.weight_decay is None and args.optimizer in ("sgd", "momentum", "adam", "lion",
                                                        "rmsprop", "adagrad"):
        args.weight_decay = 0.0
    shape = dict(SHAPES[args.model])
    for kv in args.set:
        key, value = kv.split("=", 1)
        if key not in shape:
            parser.error("%s has no shape key '%s'" % (args.model, key))
        shape[key] = type(shape[key])(value)  # norm_eps is a float
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model, weights, batch, x, y, loss_fn, opt = build(args.model, shape, args.device)
    CROSS_ENTROPY.update(label_smoothing=args.label_smoothing, ignore_index=args.ignore_index)
    if args.class_weights:
        CROSS_ENTROPY["weight"] = torch.tensor(
            [float(w) for w in args.class_weights.split(",")], device=args.device)
    if args.ignored_share:  # in place: the batch written holds the same labels
        y[torch.rand(y.shape, device=y.device) < args.ignored_share] = args.ignore_index
    freeze(args, model)
    opt = optimizer(args, model, opt)
    scheduler = schedule(args, opt)
    prefix = "%s/%s" % (args.dir, args.model)
    if args.hf_vocab:
        save_safetensors(prefix + ".hf.safetensors",
                         hugging_face_weights(model, args.model, args.hf_vocab))
    save_safetensors(prefix + ".init.safetensors", weights(model, shape))
    save_safetensors(prefix + ".data.safetensors", batch)
    amp = args.mode == "amp"
    kind = "cuda" if args.device.startswith("cuda") else "cpu"
    if amp and kind != "cuda":
        parser.error("--mode amp runs on a GPU (autocast f16 with GradScaler)")
    scaler = torch.amp.GradScaler("cuda", init_scale=65536.0) if amp else None
    ema = copy.deepcopy(model) if args.ema_decay else None
    applied = 0
    losses, lrs, norms = [], [], []
    for _ in range(args.steps):
        scale_before = scaler.get_scale() if scaler else 1.0
        lrs.append(opt.param_groups[0]["lr"] / opt.param_groups[0].get("lr_factor", 1.0))
        opt.zero_grad(set_to_none=True)
        if amp:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = loss_fn(model(x), y)
        else:
            loss = loss_fn(model(x), y)
        if scaler:
            scaler.scale(loss).backward()
            if args.clip_grad_norm:
                scaler.unscale_(opt)
                norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(),
                                                            args.clip_grad_norm).item())
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            if args.clip_grad_norm:
                norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(),
                                                            args.clip_grad_norm).item())
            opt.step()
        losses.append(loss.item())
        if ema and (not scaler or scaler.get_scale() >= scale_before):  # not a skipped step
            applied += 1
            d = args.ema_decay
            if args.ema_warmup:
                d = min(d, (1 + applied) / (10 + applied))
            with torch.no_grad():
                for e, p in zip(ema.parameters(), model.parameters()):
                    if p.requires_grad:
                        e.lerp_(p, 1 - d)
        if scheduler:
            scheduler.step()
    if ema:
        save_safetensors(prefix + ".ema.safetensors", weights(ema, shape))
    peer = {"model": args.model, "mode": args.mode, "losses": losses}
    if scheduler:
        peer["lrs"] = lrs
    if norms:
        peer["grad_norms"] = norms
    result = json.dumps(peer)
    with open(prefix + ".peer.json", "w") as f:
        f.write(result + "\n")
    print(result)


if __name__ == "__main__":
    main()
