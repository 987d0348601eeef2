"""tiny-idx.py DIR N: a Fashion-MNIST-shaped data set of N images (gzip'd IDX
train and t10k files) in DIR, for tests that need a small one."""
import gzip
import os
import struct
import sys

folder, count = sys.argv[1], int(sys.argv[2])
os.makedirs(folder, exist_ok=True)
for part in ("train", "t10k"):
    with gzip.open(os.path.join(folder, f"{part}-images-idx3-ubyte.gz"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, count, 28, 28) + bytes(count * 784))
    with gzip.open(os.path.join(folder, f"{part}-labels-idx1-ubyte.gz"), "wb") as f:
        f.write(struct.pack(">II", 0x801, count) + bytes(i % 10 for i in range(count)))
