"""An independent reference for ampc's FP8 casts (docs/runtime.md, "FP8").

  fp8_reference.py make IN.safetensors     2^20 f32 inputs: specials, every
      midpoint between neighbouring codes of both formats and the floats
      beside it, every f32 whose low 16 bits are 0, then seeded random bits
  fp8_reference.py check IN.safetensors OUT.safetensors
      checks `e4m3`, `e5m2` (the codes) and `e4m3.f32`, `e5m2.f32` (widened)
      against the rule computed here from the formats' definitions: nearest
      value, ties to the even code, beyond the largest (and ±inf) the largest,
      NaN the code 0x7F, the sign kept (-0 and negative underflow give 0x80).

Pure Python, exact integer arithmetic: every value is scaled by 2^149 (the
smallest f32 subnormal) to an integer."""
import bisect
import json
import math
import random
import struct
import sys

N = 1 << 20
FORMATS = {"e4m3": (3, 7, 0x7E, False), "e5m2": (2, 15, 0x7B, True)}


def decode(code, fmt):
    """The value of `code`, from the format's definition (None for NaN)."""
    m_bits, bias, _, has_inf = fmt
    e_bits = 7 - m_bits
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> m_bits) & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
    top = (1 << e_bits) - 1
    if has_inf and e == top:
        return sign * math.inf if m == 0 else None
    if not has_inf and e == top and m == (1 << m_bits) - 1:
        return None
    if e == 0:
        return sign * math.ldexp(m, 1 - bias - m_bits)
    return sign * math.ldexp((1 << m_bits) + m, e - bias - m_bits)


def scaled(v):
    return int(v * 2.0 ** 149)


def table(fmt):
    values = [decode(c, fmt) for c in range(fmt[2] + 1)]
    return values, [scaled(v) for v in values]


def expected(x, fmt, values, keys):
    if math.isnan(x):
        return 0x7F
    sign = 0x80 if math.copysign(1.0, x) < 0 else 0
    a = abs(x)
    if a >= values[-1]:
        return sign | fmt[2]
    k = scaled(a)
    i = bisect.bisect_right(keys, k) - 1
    lo, hi = k - keys[i], keys[i + 1] - k
    return sign | (i if lo < hi or (lo == hi and i % 2 == 0) else i + 1)


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def bits_to_f32(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


def inputs():
    out = [0.0, -0.0, math.inf, -math.inf, math.nan, bits_to_f32(0xFFC00001),
           bits_to_f32(0x7F800001), 448.0, 464.0, 465.0, 480.0, 57344.0, 61440.0, 61439.0,
           bits_to_f32(1), bits_to_f32(0x80000001)]
    for fmt in FORMATS.values():
        values, _ = table(fmt)
        for a, b in zip(values, values[1:]):
            mid = f32((a + b) / 2)
            for v in (mid, math.nextafter(mid, -math.inf), math.nextafter(mid, math.inf), a):
                out += [f32(v), -f32(v)]
    out += [bits_to_f32(u << 16) for u in range(1 << 16)]
    rng = random.Random(0)
    while len(out) < N:
        out.append(bits_to_f32(rng.getrandbits(32)))
    return [f32(v) for v in out[:N]]


def write_safetensors(path, name, values):
    data = struct.pack("<%df" % len(values), *values)
    header = json.dumps({name: {"dtype": "F32", "shape": [len(values)],
                                "data_offsets": [0, len(data)]}}).encode()
    header += b" " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + data)


def read_safetensors(path):
    blob = open(path, "rb").read()
    size = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + size])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = (t["dtype"], blob[8 + size + a:8 + size + b])
    return out


def check(in_path, out_path):
    xs = struct.unpack("<%df" % N, read_safetensors(in_path)["x"][1])
    got = read_safetensors(out_path)
    failures = 0
    for name, fmt in FORMATS.items():
        dtype, codes = got[name]
        assert dtype == "F8_" + name.upper(), dtype
        values, keys = table(fmt)
        widened = struct.unpack("<%df" % N, got[name + ".f32"][1])
        wrong = [(x, c) for x, c in zip(xs, codes) if c != expected(x, fmt, values, keys)]
        for x, c in wrong[:5]:
            print(f"{name}: {x!r} gave {c:#04x}, expected {expected(x, fmt, values, keys):#04x}")
        bad_widen = sum(1 for c, w in zip(codes, widened)
                        if not (decode(c, fmt) is None and math.isnan(w)) and decode(c, fmt) != w)
        print(f"{name}: {N - len(wrong)} of {N} rounded as the reference, "
              f"{N - bad_widen} widened exactly")
        failures += len(wrong) + bad_widen
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1] == "make":
        write_safetensors(sys.argv[2], "x", inputs())
    else:
        sys.exit(check(sys.argv[2], sys.argv[3]))
