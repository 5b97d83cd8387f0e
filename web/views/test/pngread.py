"""pngread.py: Chromium's screenshots as images with pixels to look at.

read(path) -> Image with .w, .h and .px(x, y) -> (r, g, b). The decoding
is tests/web/cdp.py's decode_png (8-bit RGB/RGBA, non-interlaced: what
Chromium writes), not a second copy of it.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', '..', 'tests', 'web'))
import cdp  # noqa: E402


class Image:
    def __init__(self, w, h, rows):
        self.w, self.h, self.rows = w, h, rows  # rows: RGBA bytearrays

    def px(self, x, y):
        if not (0 <= x < self.w and 0 <= y < self.h):
            raise IndexError('pixel (%d,%d) outside %dx%d' % (x, y, self.w,
                                                              self.h))
        return tuple(self.rows[y][x * 4:x * 4 + 3])


def read(path):
    with open(path, 'rb') as f:
        data = f.read()
    try:
        w, h, rows = cdp.decode_png(data)
    except ValueError as e:
        raise ValueError('%s: %s' % (path, e))
    return Image(w, h, rows)
