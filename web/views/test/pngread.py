"""pngread.py: reads the 8-bit RGB/RGBA PNGs Chromium's screenshots are.

read(path) -> Image with .w, .h and .px(x, y) -> (r, g, b). Only what the
view tests need: non-interlaced, bit depth 8, colour types 2 and 6.
"""
import struct
import zlib


class Image:
    def __init__(self, w, h, bpp, rows):
        self.w, self.h, self.bpp, self.rows = w, h, bpp, rows

    def px(self, x, y):
        if not (0 <= x < self.w and 0 <= y < self.h):
            raise IndexError('pixel (%d,%d) outside %dx%d' % (x, y, self.w,
                                                              self.h))
        i = x * self.bpp
        return tuple(self.rows[y][i:i + 3])


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('%s: not a PNG' % path)
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
        elif kind == b'IEND':
            break
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError('%s: unsupported PNG (depth %d, type %d)' % (
            path, depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b''.join(idat))
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        off = y * (stride + 1)
        ft = raw[off]
        line = bytearray(raw[off + 1:off + 1 + stride])
        if ft == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xff
        elif ft == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 0xff
        elif ft == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xff
        elif ft == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up_left = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + _paeth(left, prev[i], up_left)) & 0xff
        elif ft != 0:
            raise ValueError('%s: bad filter %d' % (path, ft))
        rows.append(line)
        prev = line
    return Image(w, h, bpp, rows)
