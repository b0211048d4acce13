"""Image perceptual hash (pHash) of richardwooding/fingerprint, bit-identical to the Go code.

The reference (``phash.go``) decodes an image with Go's ``image.Decode`` (PNG, JPEG, GIF),
scales it to a 32x32 ``*image.RGBA`` with ``golang.org/x/image/draw`` ``CatmullRom.Scale``,
takes Rec. 601 luma, computes the unnormalised 2-D DCT-II of which it keeps the 8x8
low-frequency block, and sets bit ``u*8+v`` iff coefficient ``(u, v)`` is strictly above the
median of the 63 AC coefficients (spec §4.2-4.3).

Reproducing it bit for bit takes three things this module does explicitly:

* **Go's pixel model.** Pillow decodes the pixels; the samples are then re-expressed as the
  Go image type ``image/png`` would have produced (``*image.Gray``, ``*image.RGBA``,
  ``*image.NRGBA``, ``*image.Paletted``, ``*image.Gray16``, ``*image.RGBA64``,
  ``*image.NRGBA64``) and read the way the scaler reads them (premultiplied 16-bit values).
  PNG headers (bit depth, colour type, ``PLTE``, ``tRNS``) are parsed here, not taken from
  Pillow, which folds some of them away; 16-bit colour samples, which Pillow truncates to
  8 bits, are recovered by decoding the low bytes in a second pass.
* **Go's float operation order.** The scaler's sums, the luma and the DCT are evaluated in
  float64 in exactly Go's order (each product rounded, then added left to right; no fused
  multiply-add). Sums are vectorised with numpy across independent outputs only; the
  sequential direction uses ``np.add.accumulate``, which is a running sum by definition.
* **Go's cosines.** The DCT uses the 256 float64 values of Go's ``math.Cos`` shipped in
  ``neardup_udfs/data/go_cos_table.json`` (61 of them differ by 1 ulp from CPython's).

JPEG and GIF go through the same pipeline, but Go's JPEG decoder (its own IDCT, chroma
replication) is not reproducible with libjpeg, so JPEG hashes are only close to Go's; GIF
frames are lossless and modelled like Go's ``*image.Paletted`` (first frame, frame bounds),
but have no golden.

**Formats beyond the reference's decoders** (``PILLOW_FORMATS``: WebP, BMP, TIFF, ICO) are
decoded by Pillow and go through the same pipeline (same pipeline id): their pixels are
mapped onto the Go image type Go's own decoders for them (``golang.org/x/image/webp``,
``bmp``, ``tiff``) return, or the closest one (:func:`go_image_from_pil`). There is no Go
reference for them: the hash is as exact as the decoded pixels (lossless WebP, BMP and
uncompressed or LZW/Deflate TIFF give PNG's hash of the same pixels; lossy WebP is decoded
by libwebp to RGB, not to Go's YCbCr, so it is close). Vector and exotic formats (SVG, EPS,
WMF, PSD, JPEG 2000, AVIF/HEIF, TGA, ...) are refused as unsupported. A file with more than
one frame (animated GIF, WebP or PNG, multi-page TIFF) is hashed by its first frame, and
:class:`Decoded` says so. Every format is size-checked from its header before any pixel is
decoded (for WebP, before Pillow even creates libwebp's decoder, which allocates the canvas).

Modules, in pipeline order (each imports the others' submodules directly):

* ``formats``: the accepted formats, signature sniffing, ``DEFAULT_MAX_PIXELS``, ``PHashError``.
* ``pixels``: Go's pixel model (``GoImage``), Go palettes, Pillow images onto that model.
* ``pillow_io``: opening and loading through Pillow, failures as ``PHashError``.
* ``png``, ``gif_jpeg``, ``pillow_formats``: the per-format decoders and header checks.
* ``decoding``: ``decode_image`` / ``decode`` / ``open_image``, the decoding entry points.
* ``resample``: ``CatmullRom.Scale`` to the 32x32 grid (``resize32``).
* ``dct``: Go's cosine table, luma, the 8x8 DCT and the median bits.
* ``hexfmt``: the hex wire form and the Hamming distance.
* ``api``: ``phash``, ``phash_image`` and the batch API used by the UDFs.

This package re-exports the names used outside it.
"""

from __future__ import annotations

from neardup_udfs.kernels.phash.api import phash, phash_batch, phash_image, phash_images
from neardup_udfs.kernels.phash.dct import dct8, go_cos_table, hash_from_dct, luma
from neardup_udfs.kernels.phash.decoding import decode, decode_image, open_image
from neardup_udfs.kernels.phash.formats import (
    ANIMATED,
    DEFAULT_MAX_PIXELS,
    GO_REFERENCE_FORMATS,
    PHashError,
)
from neardup_udfs.kernels.phash.hexfmt import phash_distance, phash_from_hex, phash_hex
from neardup_udfs.kernels.phash.pixels import GoImage
from neardup_udfs.kernels.phash.resample import resize32

__all__ = [
    "ANIMATED",
    "DEFAULT_MAX_PIXELS",
    "GO_REFERENCE_FORMATS",
    "GoImage",
    "PHashError",
    "dct8",
    "decode",
    "decode_image",
    "go_cos_table",
    "hash_from_dct",
    "luma",
    "open_image",
    "phash",
    "phash_batch",
    "phash_distance",
    "phash_from_hex",
    "phash_hex",
    "phash_image",
    "phash_images",
    "resize32",
]
