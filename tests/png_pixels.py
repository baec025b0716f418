"""A PNG reader for tests that inspect screenshots (8-bit RGB or RGBA, non-interlaced: what
headless Chromium writes), so that a test can say where on the page something was drawn."""

from __future__ import annotations

import struct
import zlib


def read_png(path) -> tuple[int, int, int, list[bytes]]:
    """(width, height, channels, rows): each row `width * channels` bytes (RGB or RGBA)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def drawn_columns(width: int, channels: int, rows: list[bytes], threshold: int = 200) -> tuple[int, int]:
    """The leftmost and rightmost columns holding a dark pixel (any channel below
    `threshold`): how much of the width the page's drawing spans."""
    lo, hi = width, -1
    for row in rows:
        for x in range(width):
            px = row[x * channels:x * channels + 3]
            if min(px) < threshold:
                lo, hi = min(lo, x), max(hi, x)
                break
        for x in range(width - 1, hi, -1):
            px = row[x * channels:x * channels + 3]
            if min(px) < threshold:
                hi = x
                break
    return lo, hi
