"""A windowed-attention kernel in NumPy for the shrinking tests and docs/python.md's example:
float64 compute, one rounding to the storage format. off_by_one=True plants the classic bug:
the window admits one key too many (p − j ≤ w instead of p − j < w)."""
import numpy as np


def attention(q, k, v, *, h, g, d, window, off_by_one=False):
    t = q.shape[0]
    qh = np.asarray(q, np.float64).reshape(t, h, d)
    kh = np.asarray(k, np.float64).reshape(t, g, d)
    vh = np.asarray(v, np.float64).reshape(t, g, d)
    dist = np.arange(t)[:, None] - np.arange(t)[None, :]  # p − j
    visible = (dist >= 0) & (dist < window + (1 if off_by_one else 0))
    out = np.empty((t, h, d))
    for head in range(h):
        kv = head // (h // g)  # grouped-query attention: h/g query heads share a KV head
        s = qh[:, head] @ kh[:, kv].T / np.sqrt(d)
        s = np.where(visible, s, -np.inf)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        out[:, head] = (p / p.sum(axis=1, keepdims=True)) @ vh[:, kv]
    return out.reshape(t, h * d).astype(q.dtype)
