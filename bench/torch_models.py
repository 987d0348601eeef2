"""The zoo's mlp, simplenet, mnist_cnn, resnet50, bert, gpt2 and llama in PyTorch, for the benchmarks."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


def run_block(model, block, *args):
    """block(*args), recomputed in the backward (torch.utils.checkpoint) when
    the model trains with `checkpointing` on."""
    if model.checkpointing and model.training:
        return checkpoint(block, *args, use_reentrant=False)
    return block(*args)


class MnistCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(1, 16, 5, padding=2, bias=False), nn.BatchNorm2d(16)
        self.conv2, self.bn2 = nn.Conv2d(16, 64, 5, padding=2, bias=False), nn.BatchNorm2d(64)
        self.fc1, self.fc2 = nn.Linear(7 * 7 * 64, 64), nn.Linear(64, 10)

    def forward(self, x):
        x = x.view(-1, 1, 28, 28)
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def mlp(hidden, inputs, outputs):
    return nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                         nn.ReLU(), nn.Linear(hidden, outputs))


class Bottleneck(nn.Module):
    """ResNet-50's block: 1x1, 3x3 (stride), 1x1 x4, projection when the shape changes."""

    def __init__(self, cin, width, stride):
        super().__init__()
        cout = 4 * width
        self.c1, self.b1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
        self.c2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.b2 = nn.BatchNorm2d(width)
        self.c3, self.b3 = nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout)
        self.proj = None
        if stride != 1 or cin != cout:
            self.proj = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = F.relu(self.b2(self.c2(y)))
        y = self.b3(self.c3(y))
        return F.relu(y + (self.proj(x) if self.proj is not None else x))


class ResNet50(nn.Module):
    """The zoo's resnet at depth 50: 8 input channels (RGB zero-padded), a
    7x7/2 stem, a 3x3/2 max pool, stages of 3, 4, 6, 3 bottlenecks, global
    average pooling and a classifier."""

    def __init__(self, channels=8, classes=1000):
        super().__init__()
        self.stem, self.bn = nn.Conv2d(channels, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64)
        blocks, cin = [], 64
        for width, count, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
            for i in range(count):
                blocks.append(Bottleneck(cin, width, stride if i == 0 else 1))
                cin = 4 * width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.stem(x))), 3, 2, 1)
        return self.fc(self.blocks(x).mean((2, 3)))


class Bert(nn.Module):
    """The zoo's bert: post-norm encoder layers, erf GELU, no dropout, layer
    norms with epsilon 1e-12 (BERT's), an MLM head tied to the word
    embeddings, cross entropy over every token."""

    def __init__(self, layers=12, hidden=768, heads=12, seq=128, vocab=30528):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        nn.init.normal_(self.word.weight, std=0.02)  # the zoo's, and BERT's
        self.position = nn.Parameter(torch.randn(seq, hidden) * 0.02)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(hidden, heads, 4 * hidden, dropout=0.0,
                                       activation="gelu", layer_norm_eps=1e-12,
                                       batch_first=True),
            layers, enable_nested_tensor=False)
        self.transform = nn.Linear(hidden, hidden)
        self.head_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.decoder_b = nn.Parameter(torch.zeros(vocab))

    def forward(self, ids):
        h = self.norm(self.word(ids) + self.position)
        h = self.head_norm(F.gelu(self.transform(self.encoder(h))))
        return h @ self.word.weight.t() + self.decoder_b


class Gpt2Block(nn.Module):
    """nanoGPT's block: pre-norm causal attention (one c_attn projection of
    q, k and v) and a tanh-GELU MLP, layer norms with epsilon 1e-5."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.c_attn, self.attn_proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
        self.c_fc, self.mlp_proj = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

    def attention(self, x):
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for z in self.c_attn(x).split(c, dim=2))
        if hasattr(F, "scaled_dot_product_attention"):  # PyTorch 2: flash or cuDNN
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
            y = att.masked_fill(mask, float("-inf")).softmax(-1) @ v
        return self.attn_proj(y.transpose(1, 2).reshape(b, t, c))

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    """The zoo's gpt2 as nanoGPT writes it: learned positions, pre-norm
    blocks, a final layer norm, logits from the tied token table; GPT-2's
    init (normal 0.02, residual projections 0.02 / sqrt(2 * layers)).
    `checkpointing` recomputes each block in the backward
    (torch.utils.checkpoint)."""

    def __init__(self, layers=12, hidden=768, heads=12, seq=1024, vocab=50304,
                 checkpointing=False):
        super().__init__()
        self.checkpointing = checkpointing
        self.wte, self.wpe = nn.Embedding(vocab, hidden), nn.Embedding(seq, hidden)
        self.h = nn.ModuleList(Gpt2Block(hidden, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        for name, p in self.named_parameters():
            if name.endswith("proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * layers))
            elif p.dim() == 2:
                nn.init.normal_(p, std=0.02)
            elif name.endswith(".bias") and "ln" not in name:
                nn.init.zeros_(p)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe.weight[: ids.shape[1]]
        for block in self.h:
            x = run_block(self, block, x)
        return self.ln_f(x) @ self.wte.weight.t()


class RmsNorm(nn.Module):
    def __init__(self, hidden, eps=1e-5):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(hidden)), eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaBlock(nn.Module):
    """Hugging Face's LlamaDecoderLayer, written plainly: RMS norm, q k v o
    without biases (q, k and v with, as Qwen2DecoderLayer's, under qkv_bias),
    rotary q and k, grouped-query causal attention, SwiGLU."""

    def __init__(self, hidden, heads, kv_heads, ffn, qkv_bias=False, eps=1e-5):
        super().__init__()
        self.heads, self.kv_heads, self.d = heads, kv_heads, hidden // heads
        self.input_layernorm = RmsNorm(hidden, eps)
        self.post_attention_layernorm = RmsNorm(hidden, eps)
        self.q_proj = nn.Linear(hidden, hidden, bias=qkv_bias)
        self.k_proj = nn.Linear(hidden, kv_heads * self.d, bias=qkv_bias)
        self.v_proj = nn.Linear(hidden, kv_heads * self.d, bias=qkv_bias)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        self.gate_proj = nn.Linear(hidden, ffn, bias=False)
        self.up_proj = nn.Linear(hidden, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, hidden, bias=False)

    def attention(self, x, cos, sin):
        b, t, c = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.d).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.d).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.d).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)  # repeat_kv
        v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        y = att.masked_fill(mask, float("-inf")).softmax(-1) @ v
        return self.o_proj(y.transpose(1, 2).reshape(b, t, c))

    def forward(self, x, cos, sin):
        x = x + self.attention(self.input_layernorm(x), cos, sin)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class LoraLinear(nn.Module):
    """PEFT's LoRA Linear: the base layer (frozen by add_lora) plus
    lora_B(lora_A(x)) * alpha / rank, lora_A kaiming-uniform (a = sqrt(5)),
    lora_B zeros."""

    def __init__(self, base, rank, alpha):
        super().__init__()
        self.base, self.scaling = base, alpha / rank
        self.lora_A = nn.Linear(base.in_features, rank, bias=False)
        self.lora_B = nn.Linear(rank, base.out_features, bias=False)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B.weight)

    @property
    def weight(self):
        return self.base.weight

    @property
    def bias(self):
        return self.base.bias

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scaling


LLAMA_LINEARS = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "out": "o_proj",
                 "gate": "gate_proj", "up": "up_proj", "down": "down_proj"}


def add_lora(model, targets, rank, alpha):
    """Freezes every parameter of a Llama and adapts the linear layers named
    by `targets` (the zoo's names: q, k, v, out, gate, up, down), as PEFT's
    get_peft_model with target_modules does."""
    for p in model.parameters():
        p.requires_grad_(False)
    for block in model.layers:
        for ours in targets:
            theirs = LLAMA_LINEARS[ours]
            setattr(block, theirs, LoraLinear(getattr(block, theirs), rank, alpha))
    return model


class Llama(nn.Module):
    """The zoo's llama as Hugging Face's LlamaForCausalLM computes it: token
    table, rotary tables (computed in f64, rounded once to f32, as ampc's
    constants are), the blocks, a final RMS norm, an lm_head of its own or
    (tie) the token table; init normal(0, 0.02), biases 0, norm weights 1.
    `checkpointing` recomputes each block in the backward
    (torch.utils.checkpoint, as transformers' gradient_checkpointing)."""

    def __init__(self, layers, hidden, heads, kv_heads, ffn, seq, vocab, theta=10000.0,
                 qkv_bias=False, tie=False, eps=1e-5, rope_scaling=None, checkpointing=False):
        super().__init__()
        self.checkpointing = checkpointing
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(LlamaBlock(hidden, heads, kv_heads, ffn, qkv_bias, eps)
                                    for _ in range(layers))
        self.norm, self.lm_head = RmsNorm(hidden, eps), nn.Linear(hidden, vocab, bias=False)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)
            elif name.endswith(".bias"):
                nn.init.zeros_(p)
        if tie:
            self.lm_head.weight = self.embed_tokens.weight
        d = hidden // heads
        inv_freq = theta ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
        if rope_scaling:  # Hugging Face's _compute_llama3_parameters
            factor, low, high, original = rope_scaling
            wavelen = 2 * math.pi / inv_freq
            scaled = torch.where(wavelen > original / low, inv_freq / factor, inv_freq)
            smooth = (original / wavelen - low) / (high - low)
            smoothed = (1 - smooth) * scaled / factor + smooth * scaled
            medium = ~(wavelen < original / high) & ~(wavelen > original / low)
            inv_freq = torch.where(medium, smoothed, scaled)
        angles = torch.outer(torch.arange(seq, dtype=torch.float64), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos().float(), persistent=False)
        self.register_buffer("sin", angles.sin().float(), persistent=False)

    def forward(self, ids):
        x, t = self.embed_tokens(ids), ids.shape[1]
        for block in self.layers:
            x = run_block(self, block, x, self.cos[:t], self.sin[:t])
        return self.lm_head(self.norm(x))
