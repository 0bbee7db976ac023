"""Reads a stored chunk document: JSON, or the store's compact form (Sources/GyroStore/ChunkBody.swift);
and the open chunks' samples in the sample ring (Sources/GyroStore/RingSlot.swift), whose batches
are compact bodies without a head.

The suite reads the store file directly; a closed chunk's body is kept compact (its JSON head as
text, its points as zigzag LEB128 deltas) and rendered by the gateway when read. This decodes it
into the document's points as its JSON would give them, so the invariants check what a
subscriber receives.
"""
from __future__ import annotations

import json
import struct


def _varint(body: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = body[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _unzigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def _round(value: float) -> int:
    """Swift's `rounded()`: half away from zero."""
    return int(value + 0.5) if value >= 0 else -int(-value + 0.5)


def document(body: bytes) -> dict:
    """The chunk document `body` stands for, as parsed JSON: `data` holds its points."""
    if not body or body[0] != 0:
        return json.loads(body)
    head, points = _parts(body)
    document = json.loads(bytes(head) + b"]}")
    document["data"] = points
    return document


def ring_batches(slots) -> dict[str, list[tuple[int, list[dict]]]]:
    """The sample ring's batches (Sources/GyroStore/RingSlot.swift), by chunk id: (offset, points),
    from the `data` of every slot. Slots never written are skipped; a damaged one is an error."""
    batches: dict[str, list[tuple[int, list[dict]]]] = {}
    for data in slots:
        if not data or data[0] == 0:
            continue
        assert data[0] == 1, f"ring slot format {data[0]}"
        length = struct.unpack_from("<H", data, 9)[0]
        payload = data[15:15 + length]
        count, at = _varint(payload, 0)
        for _ in range(count):
            size, at = _varint(payload, at)
            chunk_id = payload[at:at + size].decode()
            at += size
            offset, at = _varint(payload, at)
            size, at = _varint(payload, at)
            _, points = _parts(payload[at:at + size])
            at += size
            batches.setdefault(chunk_id, []).append((offset, points))
        assert at == len(payload), "trailing bytes in a ring slot"
    return batches


def _parts(body: bytes) -> tuple[bytes, list[dict]]:
    """A compact body's JSON head and its points, as its JSON would give them."""
    assert body[1] == 1, f"compact chunk body version {body[1]}"
    at = 2
    fields = []
    for _ in range(5):  # head, three axis names, point suffix
        length, at = _varint(body, at)
        fields.append(body[at:at + length])
        at += length
    head, keys = fields[0], [f.decode() or k for f, k in zip(fields[1:4], ("gx", "gy", "gz"))]
    count, at = _varint(body, at)
    flag = body[at]
    at += 1
    bitmap = b""
    if flag == 2:
        bitmap = body[at:at + (count + 7) // 8]
        at += len(bitmap)
    mode = body[at]
    at += 1
    units = None
    if mode == 1:
        units = struct.unpack_from("<d", body, at)[0]
        at += 8
    points = []
    time = step = 0
    axes = [0, 0, 0]
    for index in range(count):
        delta, at = _varint(body, at)
        step += _unzigzag(delta)
        time += step
        for axis in range(3):
            delta, at = _varint(body, at)
            axes[axis] += _unzigzag(delta)
        if units is not None:
            values = [struct.unpack("<f", struct.pack("<f", a * units))[0] for a in axes]
            scaled = [_round(v * 100_000) for v in values]
        else:
            scaled = list(axes)
        point = {"timestamp": time / 1000}
        for key, value in zip(keys, scaled):
            point[key] = value / 100_000
        if flag == 1 or (flag == 2 and bitmap[index // 8] & (1 << (index % 8))):
            point["backfilled"] = True
        points.append(point)
    assert at == len(body), "trailing bytes after the points"
    return head, points
