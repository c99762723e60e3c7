"""Makes an ONNX graph that stores its weights as int8 keep them as int8 in memory.

The int8 MiniLM (``flynn.recall.minilm_int8``) stores each weight matrix as int8 with a float
scale per column, widened on the way in (``MatMul(x, Mul(Cast(W_int8), scale))``). Left so,
ONNX Runtime folds every widening once at load: float32 weights again (157 MB more resident
instead of about 40). ``quantized`` rewrites each such product into ONNX Runtime's
``MatMulNBits`` with 8 bits (the same int8 values and scales, laid out as it wants them, the
activations quantized per block of 128 when multiplied), and the token table's lookup into a
lookup of int8 rows and their scales, so nothing is folded: a quarter of the memory, and a
short question in about 2.4 ms of CPU instead of 3.5. (``DynamicQuantizeMatMul``, which
quantizes the activations per call as a whole, was faster still but moved the vectors four
times as far from the float model's: cosine 0.993 against 0.999, and recall lost up to .036 on
the dev sets.) The ``onnx`` package is not needed: the model is read and written in protobuf's
wire format, copying every field it does not rewrite byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

_MODEL_GRAPH = 7
_MODEL_OPSET = 8
_GRAPH_NODE = 1
_GRAPH_INITIALIZER = 5
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP, _NODE_ATTRIBUTE, _NODE_DOMAIN = 1, 2, 3, 4, 5, 7
_TENSOR_DIMS, _TENSOR_TYPE, _TENSOR_NAME, _TENSOR_RAW = 1, 2, 8, 9
_TENSOR_FLOAT, _TENSOR_UINT8, _TENSOR_INT8 = 1, 2, 3
_BLOCK = 128
"""``MatMulNBits``' block along the inner dimension (384 and 1,536 are multiples of it)."""
_ACCURACY = 4
"""``MatMulNBits``' ``accuracy_level``: 4 multiplies in int8 (the activations quantized per
block); 0, in float32, was seven times slower here."""
_LENGTH = 2  # protobuf's wire type of strings and messages
_FLOAT = 1  # TensorProto.FLOAT
_ATTRIBUTE_INT = 2  # AttributeProto.INT
MICROSOFT = "com.microsoft"


@dataclass(frozen=True, slots=True)
class _Field:
    number: int
    wire: int
    span: memoryview  # the whole field, key included
    payload: memoryview  # a length-delimited field's bytes (empty for the other types)
    value: int  # a varint field's value


@dataclass(slots=True)
class _Node:
    inputs: list[str]
    outputs: list[str]
    op: str
    domain: str


def _varint(data: memoryview, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _fields(data: memoryview) -> Iterator[_Field]:
    at = 0
    while at < len(data):
        start = at
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        payload, value = data[0:0], 0
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 1:
            at += 8
        elif wire == _LENGTH:
            size, at = _varint(data, at)
            payload = data[at : at + size]
            at += size
        elif wire == 5:
            at += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield _Field(number, wire, data[start:at], payload, value)


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _bytes_field(number: int, payload: bytes | memoryview) -> bytes:
    return _encode_varint(number << 3 | _LENGTH) + _encode_varint(len(payload)) + bytes(payload)


def _int_field(number: int, value: int) -> bytes:
    return _encode_varint(number << 3) + _encode_varint(value)


def _node(
    op: str, inputs: list[str], outputs: list[str], *, domain: str = "", **ints: int
) -> bytes:
    parts = [_bytes_field(_NODE_INPUT, name.encode()) for name in inputs]
    parts += [_bytes_field(_NODE_OUTPUT, name.encode()) for name in outputs]
    parts.append(_bytes_field(_NODE_NAME, f"int8_{op}_{outputs[0]}".encode()))
    parts.append(_bytes_field(_NODE_OP, op.encode()))
    for name, value in ints.items():  # an AttributeProto: name, i, type
        attribute = _bytes_field(1, name.encode()) + _int_field(3, value)
        parts.append(_bytes_field(_NODE_ATTRIBUTE, attribute + _int_field(20, _ATTRIBUTE_INT)))
    if domain:
        parts.append(_bytes_field(_NODE_DOMAIN, domain.encode()))
    return _bytes_field(_GRAPH_NODE, b"".join(parts))


def _tensor(name: str, data_type: int, dims: tuple[int, ...], raw: bytes) -> bytes:
    parts = [_int_field(_TENSOR_DIMS, size) for size in dims]
    parts.append(_int_field(_TENSOR_TYPE, data_type))
    parts.append(_bytes_field(_TENSOR_NAME, name.encode()))
    parts.append(_bytes_field(_TENSOR_RAW, raw))
    return _bytes_field(_GRAPH_INITIALIZER, b"".join(parts))


@dataclass(frozen=True, slots=True)
class _Tensor:
    dims: tuple[int, ...]
    data_type: int
    raw: memoryview


def _read_tensor(payload: memoryview) -> _Tensor:
    dims: list[int] = []
    data_type, raw = 0, payload[0:0]
    for field in _fields(payload):
        if field.number == _TENSOR_DIMS and field.wire == 0:
            dims.append(field.value)
        elif field.number == _TENSOR_DIMS:  # packed
            at = 0
            while at < len(field.payload):
                size, at = _varint(field.payload, at)
                dims.append(size)
        elif field.number == _TENSOR_TYPE:
            data_type = field.value
        elif field.number == _TENSOR_RAW:
            raw = field.payload
    return _Tensor(tuple(dims), data_type, raw)


def _matmul_nbits(
    x: str, weights: _Tensor, scale: _Tensor, name: str, outputs: list[str]
) -> bytes | None:
    """``MatMulNBits`` nodes and initializers computing ``x @ (weights * scale)``, or ``None``
    when the tensors are not an int8 matrix (inner dimension a multiple of the block) and a
    float32 scale per column."""
    import numpy as np

    if weights.data_type != _TENSOR_INT8 or len(weights.dims) != 2:
        return None
    inner, columns = weights.dims
    if inner % _BLOCK or len(weights.raw) != inner * columns:
        return None
    if scale.data_type != _TENSOR_FLOAT or len(scale.raw) != 4 * columns:
        return None
    blocks = inner // _BLOCK
    values = np.frombuffer(weights.raw, dtype=np.int8).reshape(inner, columns)
    # Column-major blocks of unsigned values around a zero point of 128.
    packed = (values.T.astype(np.int16) + 128).astype(np.uint8)
    scales = np.repeat(np.frombuffer(scale.raw, dtype=np.float32), blocks)
    zero = np.full(columns * blocks, 128, dtype=np.uint8)
    return b"".join(
        (
            _tensor(f"{name}_nbits", _TENSOR_UINT8, (columns, blocks, _BLOCK), packed.tobytes()),
            _tensor(f"{name}_nbits_scale", _TENSOR_FLOAT, (columns * blocks,), scales.tobytes()),
            _tensor(f"{name}_nbits_zero", _TENSOR_UINT8, (columns * blocks,), zero.tobytes()),
            _node(
                "MatMulNBits",
                [x, f"{name}_nbits", f"{name}_nbits_scale", f"{name}_nbits_zero"],
                outputs,
                domain=MICROSOFT,
                K=inner,
                N=columns,
                bits=8,
                block_size=_BLOCK,
                accuracy_level=_ACCURACY,
            ),
        )
    )


def _parse_node(payload: memoryview) -> _Node:
    node = _Node([], [], "", "")
    for field in _fields(payload):
        if field.number == _NODE_INPUT:
            node.inputs.append(bytes(field.payload).decode())
        elif field.number == _NODE_OUTPUT:
            node.outputs.append(bytes(field.payload).decode())
        elif field.number == _NODE_OP:
            node.op = bytes(field.payload).decode()
        elif field.number == _NODE_DOMAIN:
            node.domain = bytes(field.payload).decode()
    return node


def _tensor_name(payload: memoryview) -> str:
    for field in _fields(payload):
        if field.number == _TENSOR_NAME:
            return bytes(field.payload).decode()
    return ""


@dataclass(frozen=True, slots=True)
class Rewritten:
    model: bytes
    products: int
    """Matrix products now computed in int8."""
    lookups: int
    """Table lookups now reading int8 rows."""


def quantized(model: bytes) -> Rewritten:
    """``model`` (an ONNX ``ModelProto``) with every ``MatMul(x, Mul(Cast(W), scale))`` whose
    ``W`` is an int8 initializer turned into ``MatMulNBits`` of the same values, and every
    ``Gather(Mul(Cast(T), scale), ids)`` into ``Mul(Cast(Gather(T, ids)), Gather(scale, ids))``;
    anything else is kept as it is. Raises ``ValueError`` on bytes that are not protobuf."""
    data = memoryview(model)
    graph = next((f for f in _fields(data) if f.number == _MODEL_GRAPH), None)
    if graph is None:
        raise ValueError("not an ONNX model: no graph")
    new_graph, products, lookups = _rewrite_graph(graph.payload)
    parts: list[bytes | memoryview] = []
    for field in _fields(data):
        rewritten = field.number == _MODEL_GRAPH
        parts.append(_bytes_field(_MODEL_GRAPH, new_graph) if rewritten else field.span)
    if products or lookups:
        opset = _bytes_field(1, MICROSOFT.encode()) + _int_field(2, 1)
        parts.append(_bytes_field(_MODEL_OPSET, opset))
    return Rewritten(b"".join(parts), products, lookups)


def _rewrite_graph(graph: memoryview) -> tuple[bytes, int, int]:
    fields = list(_fields(graph))
    initializers = {
        _tensor_name(f.payload): i for i, f in enumerate(fields) if f.number == _GRAPH_INITIALIZER
    }
    nodes = {i: _parse_node(f.payload) for i, f in enumerate(fields) if f.number == _GRAPH_NODE}
    producer = {out: i for i, node in nodes.items() for out in node.outputs}
    uses: dict[str, int] = {}
    for node in nodes.values():
        for name in node.inputs:
            uses[name] = uses.get(name, 0) + 1

    def widened(name: str) -> tuple[int, int, str, str] | None:
        """``(mul, cast, int8 initializer, scale)`` when ``name`` is ``Mul(Cast(W), scale)``
        of an int8 initializer used only there."""
        mul = nodes.get(producer.get(name, -1))
        if mul is None or mul.op != "Mul" or uses.get(name) != 1 or len(mul.inputs) != 2:
            return None
        cast_at = producer.get(mul.inputs[0], -1)
        cast = nodes.get(cast_at)
        if cast is None or cast.op != "Cast" or uses.get(mul.inputs[0]) != 1:
            return None
        if cast.inputs[0] not in initializers or mul.inputs[1] not in initializers:
            return None
        return producer[name], cast_at, cast.inputs[0], mul.inputs[1]

    replaced: dict[int, bytes] = {}
    dropped: set[int] = set()
    products = lookups = 0
    for index, node in nodes.items():
        if node.op == "MatMul" and not node.domain and len(node.inputs) == 2:
            found = widened(node.inputs[1])
            if found is not None:
                mul, cast, weights, scale = found
                at, scale_at = initializers[weights], initializers[scale]
                rewritten = _matmul_nbits(
                    node.inputs[0],
                    _read_tensor(fields[at].payload),
                    _read_tensor(fields[scale_at].payload),
                    weights,
                    node.outputs,
                )
                if rewritten is not None:
                    replaced[index] = rewritten
                    # The int8 values now live in the new initializers.
                    dropped.update((mul, cast, at, scale_at))
                    products += 1
        elif node.op == "Gather" and not node.domain and len(node.inputs) == 2:
            found = widened(node.inputs[0])
            if found is not None:
                mul, cast, table, scale = found
                out, ids = node.outputs[0], node.inputs[1]
                replaced[index] = b"".join(
                    (
                        _node("Gather", [table, ids], [f"{out}_int8"]),
                        _node("Cast", [f"{out}_int8"], [f"{out}_wide"], to=_FLOAT),
                        _node("Gather", [scale, ids], [f"{out}_scale"]),
                        _node("Mul", [f"{out}_wide", f"{out}_scale"], [out]),
                    )
                )
                dropped.update((mul, cast))
                lookups += 1
    kept: list[bytes | memoryview] = []
    for index, field in enumerate(fields):
        if index not in dropped:
            kept.append(replaced.get(index, field.span))
    return b"".join(kept), products, lookups
