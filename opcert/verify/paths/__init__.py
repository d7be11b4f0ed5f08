"""Every code path of a kernel: the `layout` property (layout.py): lengths, positions, strides, mixed
vectors, long calls, caller threads; the worst ULP over all of them."""
