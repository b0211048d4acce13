"""``golang.org/x/image/draw`` ``CatmullRom.Scale`` onto a 32x32 ``*image.RGBA``, in float64
and in Go's order of operations (each product rounded, then added left to right).

Sums are vectorised across independent outputs only; the sequential direction uses
``np.add.accumulate``. The ``_LOOP_TAPS``, ``_STRIP_BYTES``, ``_CHUNK_TAPS`` and
``_TMP_BYTES`` thresholds choose among equivalent strategies (bounded memory), never the result.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.phash.pixels import GoImage

F64 = npt.NDArray[np.float64]
U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]

GRID = 32


def _catmull_rom(t: float) -> float:
    if t < 1:
        return (1.5 * t - 2.5) * t * t + 1
    return ((-0.5 * t + 2.5) * t - 4) * t + 2


@cache
def _distrib(dw: int, sw: int) -> tuple[I64, F64, F64, F64]:
    """``newDistrib(CatmullRom, dw, sw)`` as dense bands.

    Returns ``(start, weights, inv, inv_ffff)``: destination ``x`` reads source coordinates
    ``start[x] + k`` for ``k < K`` with ``weights[x, k]`` (0 where Go skips the coordinate:
    ``t >= 2``, a zero weight, or past the band), ``inv[x] = 1/totalWeight`` and
    ``inv_ffff[x] = inv[x] / 0xffff``. Adding ``p * 0.0`` to a running sum changes nothing,
    so the dense band gives Go's sums exactly.
    """
    scale = sw / dw
    half, arg = 2.0, 1.0
    if scale > 1:
        half *= scale
        arg = 1 / scale
    bands: list[tuple[int, list[float]]] = []
    inv: list[float] = []
    for x in range(dw):
        center = (x + 0.5) * scale - 0.5
        i = max(math.floor(center - half), 0)
        j = math.ceil(center + half)
        if j > sw:
            j = max(sw, i)
        total = 0.0
        ws: list[float] = []
        for coord in range(i, j):
            t = (center - coord) * arg
            if t < 0:
                t = -t
            w = _catmull_rom(t) if t < 2 else 0.0
            total += w  # adding a skipped 0.0 is exact
            ws.append(w)
        bands.append((i, ws))
        inv.append(1 / total)
    k = max(len(ws) for _, ws in bands)
    start = np.empty(dw, dtype=np.int64)
    weights = np.zeros((dw, k), dtype=np.float64)
    for x, (i, ws) in enumerate(bands):
        i = min(i, sw - k)  # keep the band inside the image (bands never exceed sw)
        shift = bands[x][0] - i
        start[x] = i
        weights[x, shift : shift + len(ws)] = ws
    inv_a = np.array(inv, dtype=np.float64)
    inv_ffff = inv_a / 0xFFFF
    for a in (start, weights, inv_a, inv_ffff):
        a.setflags(write=False)
    return start, weights, inv_a, inv_ffff


def _strided_runs(starts: I64) -> tuple[list[tuple[int, int, int, int]], I64]:
    """Split destinations into runs whose band starts form arithmetic progressions.

    Returns ``(runs, rest)``: each run ``(d0, d_step, count, s_step)`` covers destinations
    ``d0, d0 + d_step, ...`` whose starts advance by ``s_step > 0``, so their rows for one
    tap are a strided view of the source; ``rest`` are the other destinations (band starts
    clipped at the image edges, or no short period), read with a gather. With dw = 32 and a
    width that is a multiple of 32 / p (p <= 4), starts repeat with period p in d.
    """
    d = len(starts)
    runs: list[tuple[int, int, int, int]] = []
    covered = np.zeros(d, dtype=bool)
    for period in (1, 2, 4):
        if runs:
            break
        for r in range(period):
            st = starts[r::period]
            if len(st) < 4:
                continue
            diffs = np.diff(st)
            # longest stretch of equal positive differences
            best = (0, 0)
            i = 0
            while i < len(diffs):
                j = i
                while j + 1 < len(diffs) and diffs[j + 1] == diffs[i]:
                    j += 1
                if diffs[i] > 0 and j - i + 1 > best[1] - best[0]:
                    best = (i, j + 1)
                i = j + 1
            lo, hi = best
            if hi - lo + 1 >= max(4, len(st) // 2):
                runs.append((r + lo * period, period, hi - lo + 1, int(diffs[lo])))
        if len(runs) < period:
            runs = []
    for d0, dstep, count, _ in runs:
        covered[d0 : d0 + dstep * (count - 1) + 1 : dstep] = True
    return runs, np.flatnonzero(~covered)


def _taps(src: F64, idx: I64, weights: F64, out: F64) -> None:
    """``out[d] += src[idx[d, 0]]*w[d, 0]``, then ``+= src[idx[d, 1]]*w[d, 1]``, ... in order.

    Vectorised across the destinations ``d`` (rows of ``out``) and the columns of ``src``;
    sequential in the tap ``k``, exactly as Go adds them. Destinations whose rows form an
    arithmetic progression read them through strided views, the rest through a gather.
    """
    k = weights.shape[1]
    g = np.empty_like(out)
    runs, rest = _strided_runs(idx[:, 0])
    cols = np.ascontiguousarray(idx.T)
    wcols = np.ascontiguousarray(weights.T)[:, :, None]
    rest_cols = np.ascontiguousarray(cols[:, rest])
    g_rest = np.empty((len(rest), out.shape[1]), dtype=np.float64)
    for j in range(k):
        wj = wcols[j]
        for d0, dstep, count, sstep in runs:
            dsl = slice(d0, d0 + dstep * (count - 1) + 1, dstep)
            s0 = int(cols[j, d0])
            np.multiply(src[s0 : s0 + sstep * (count - 1) + 1 : sstep], wj[dsl], out=g[dsl])
        if len(rest):
            np.take(src, rest_cols[j], axis=0, out=g_rest, mode="clip")
            g_rest *= wj[rest]
            g[rest] = g_rest
        out += g


def _band_sum(src: F64, lo: int, w: F64, out: F64) -> None:
    """``out = out + src[lo]*w[0] + src[lo+1]*w[1] + ...`` left to right, for each column.

    The slow but bounded path (per destination, any band length): the running sum is a
    ``np.add.accumulate`` along the contiguous axis, which is sequential by definition.
    """
    k = len(w)
    buf = np.empty((src.shape[1], k + 1), dtype=np.float64)
    buf[:, 0] = out
    np.multiply(src[lo : lo + k].T, w[None, :], out=buf[:, 1:])
    np.add.accumulate(buf, axis=1, out=buf)
    out[...] = buf[:, k]


# Thresholds of the resampler's strategies (tests lower them to exercise every path).
_LOOP_TAPS = 4096  # horizontal taps above this (source wider than 32768): chunked path
_STRIP_BYTES = 1 << 23  # float64 bytes of source planes converted per horizontal step
_CHUNK_TAPS = 1 << 16  # columns converted at once on the chunked horizontal path
_TMP_BYTES = 1 << 26  # vertical input kept whole up to this size, else streamed


def _horizontal(img: GoImage, y0: int, y1: int, out: F64) -> None:
    """Horizontal pass sums (before ``* invTotalWeightFFFF``) of rows ``y0:y1`` into out."""
    hs, hw, _, _ = _distrib(GRID, img.width)
    kh = hw.shape[1]
    if kh <= _LOOP_TAPS:
        idx = hs[:, None] + np.arange(kh, dtype=np.int64)[None, :]
        _taps(img.planes(y0, y1), idx, hw, out)
        return
    for dx in range(GRID):
        lo = int(hs[dx])
        for c0 in range(0, kh, _CHUNK_TAPS):
            c1 = min(c0 + _CHUNK_TAPS, kh)
            part = img.planes(y0, y1, lo + c0, lo + c1)
            _band_sum(part, 0, hw[dx, c0:c1], out[dx])


def resize32(img: GoImage) -> U8:
    """``draw.CatmullRom.Scale`` of the whole image onto a zeroed 32x32 ``*image.RGBA``.

    Returns:
        (32, 32, 4) uint8, premultiplied R, G, B, A bytes (Go's ``Pix``), ``[y, x, c]``.

    Notes:
        Separable, float64: per source row, each destination column sums ``value * weight``
        over its band left to right and multiplies by ``1/totalWeight/0xffff``; per
        destination column, each destination row sums those by ``weight`` over its band,
        R, G, B are clamped to at most A, and each channel becomes
        ``ftou(sum/totalWeight) >> 8`` with ``ftou(f) = clamp(int32(0xffff*f + 0.5))``.
        Gray and YCbCr sources get an alpha of exactly 1.0 after the horizontal pass.
        Sources smaller than 32 are upscaled with the same kernel; pixels outside the image
        are absent (weights renormalised).

        Cost and memory: about 4 multiply-adds per source pixel and plane (as in Go). The
        source is converted to float64 a strip of rows at a time; the vertical input (Go's
        own ``tmp``, up to 1 KiB per source row) is kept whole when it is under 64 MiB and
        otherwise streamed into running sums, which keeps Go's summation order.
    """
    sw, sh = img.width, img.height
    _, _, _, h_inv_ffff = _distrib(GRID, sw)
    vs, vw, v_inv, _ = _distrib(GRID, sh)
    nc, planes = img.nc, img.n_planes
    kh, kv = _distrib(GRID, sw)[1].shape[1], vw.shape[1]
    width_cols = min(sw, _CHUNK_TAPS) if kh > _LOOP_TAPS else sw
    rows = max(1, _STRIP_BYTES // (8 * planes * max(width_cols, GRID)))
    whole = sh * GRID * planes * 8 <= _TMP_BYTES
    tmp_all = np.empty((sh, GRID * planes), dtype=np.float64) if whole else None
    vacc = np.zeros((GRID, GRID * planes), dtype=np.float64)
    for y0 in range(0, sh, rows):
        y1 = min(y0 + rows, sh)
        tmp = np.zeros((GRID, (y1 - y0) * planes), dtype=np.float64)
        _horizontal(img, y0, y1, tmp)
        tmp *= h_inv_ffff[:, None]
        # (dx, row, plane) -> (row, dx, plane): the vertical pass reads source rows
        tv = tmp.reshape(GRID, y1 - y0, planes).transpose(1, 0, 2).reshape(y1 - y0, -1)
        if tmp_all is not None:
            tmp_all[y0:y1] = tv
            continue
        tv = np.ascontiguousarray(tv)
        for dy in range(GRID):  # streamed: continue each destination row's running sum
            lo = int(vs[dy])
            a, b = max(lo, y0), min(lo + kv, y1)
            if a < b:
                _band_sum(tv, a - y0, vw[dy, a - lo : b - lo], vacc[dy])
    if tmp_all is not None:
        idx = vs[:, None] + np.arange(kv, dtype=np.int64)[None, :]
        _taps(tmp_all, idx, vw, vacc)
    sums = vacc.reshape(GRID, GRID, planes)
    color = sums[..., :nc]
    alpha = sums[..., nc] if img.alpha == "plane" else _const_alpha_sums(img, sw, sh)
    color = np.minimum(color, alpha[..., None])
    grid = np.empty((GRID, GRID, 4), dtype=np.uint8)
    grid[..., :3] = _ftou8(color * v_inv[:, None, None])
    grid[..., 3] = _ftou8(alpha * v_inv[:, None])
    return grid


def _scaled_sums(x: F64, w: F64, out: F64) -> None:
    """``out[d] = out[d] + x[d]*w[0] + x[d]*w[1] + ...``, left to right, in bounded memory."""
    for c0 in range(0, len(w), _CHUNK_TAPS):
        wc = w[c0 : c0 + _CHUNK_TAPS]
        buf = np.empty((len(x), len(wc) + 1), dtype=np.float64)
        buf[:, 0] = out
        np.multiply(x[:, None], wc[None, :], out=buf[:, 1:])
        np.add.accumulate(buf, axis=1, out=buf)
        out[...] = buf[:, -1]


def _const_alpha_sums(img: GoImage, sw: int, sh: int) -> F64:
    """Vertical alpha sums (dy, dx) when every source pixel has the same alpha.

    Every source row then has the same horizontal alpha, so one row is computed, and its
    vertical sums use the same per-tap products and additions as the general path.
    """
    _, hw, _, h_inv_ffff = _distrib(GRID, sw)
    _, vw, _, _ = _distrib(GRID, sh)
    if img.alpha == "one":
        row = np.ones(GRID, dtype=np.float64)
    else:
        a = np.array([img.alpha_value], dtype=np.float64)
        row = np.zeros(GRID, dtype=np.float64)
        for dx in range(GRID):
            _scaled_sums(a, hw[dx], row[dx : dx + 1])
        row *= h_inv_ffff
    out = np.zeros((GRID, GRID), dtype=np.float64)
    for dy in range(GRID):
        _scaled_sums(row, vw[dy], out[dy])
    return out


def _ftou8(f: F64) -> U8:
    """``uint8(ftou(f) >> 8)``: ``int32(0xffff*f + 0.5)`` truncated, clamped to 16 bits."""
    v = np.trunc(f * 65535.0 + 0.5)
    return (np.clip(v, 0, 65535).astype(np.int64) >> 8).astype(np.uint8)
