"""The zoo's mlp, simplenet, mnist_cnn, resnet50 and bert in PyTorch, for the benchmarks."""
import torch
import torch.nn as nn
import torch.nn.functional as F


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
