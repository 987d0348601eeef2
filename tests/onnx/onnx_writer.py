"""A minimal ONNX writer (the protobuf wire format by hand, no package) for
graphs that PyTorch does not export, such as other exporters' forms. A
model is a list of nodes over named inputs, initializers and outputs:

    model(nodes=[node("LogSoftmax", ["x"], ["lp"], axis=1)],
          inputs=[("x", FLOAT, [4, 3])], outputs=[("lp", FLOAT, [])],
          initializers=[("w", [1.0, 2.0, 3.0])])

returns the bytes of an opset 13 ModelProto. Field numbers are onnx.proto's."""
import struct

FLOAT, INT64 = 1, 7  # TensorProto.DataType


def _varint(n):
    n &= (1 << 64) - 1  # a negative int64 is its two's complement
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, value):
    """Field `number`: an int as a varint, str/bytes length-delimited."""
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def node(op_type, inputs, outputs, name=None, **attrs):
    """A NodeProto; int attributes are INT, str ones STRING."""
    body = b"".join(_field(1, i) for i in inputs) + b"".join(_field(2, o) for o in outputs)
    body += _field(3, name or op_type) + _field(4, op_type)
    for key, value in attrs.items():
        a = _field(1, key)
        a += _field(3, value) + _field(20, 2) if isinstance(value, int) else \
            _field(4, value) + _field(20, 3)
        body += _field(5, a)
    return body


def _value_info(name, elem_type, shape):
    dims = b"".join(_field(1, _field(1, d)) for d in shape)
    tensor = _field(1, elem_type) + _field(2, dims)
    return _field(1, name) + _field(2, _field(1, tensor))


def _initializer(name, values):
    """An f32 rank-1 TensorProto with raw data."""
    raw = struct.pack("<%df" % len(values), *values)
    return _field(1, len(values)) + _field(2, FLOAT) + _field(8, name) + _field(9, raw)


def model(nodes, inputs, outputs, initializers=()):
    graph = b"".join(_field(1, n) for n in nodes) + _field(2, "graph")
    graph += b"".join(_field(5, _initializer(*i)) for i in initializers)
    graph += b"".join(_field(11, _value_info(*i)) for i in inputs)
    graph += b"".join(_field(12, _value_info(*o)) for o in outputs)
    opset = _field(1, "") + _field(2, 13)
    return _field(1, 8) + _field(8, opset) + _field(7, graph)
