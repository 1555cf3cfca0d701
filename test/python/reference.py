"""Plain full attention in float64 numpy: the independent reference the
Python tests compare against (no cp-mlir code involved)."""

import numpy as np


def attention(q, k, v, allowed=None, bias=None, scale=None):
    """softmax(scale * q k^T + bias) v over [B, H, S, D] arrays, with GQA
    (k/v heads repeated), `allowed` a boolean [S, S] mask (True = attend)
    and fully masked rows giving 0."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    groups = q.shape[1] // k.shape[1]
    k = np.repeat(k, groups, axis=1)
    v = np.repeat(v, groups, axis=1)
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    scores = scale * np.einsum("bhqd,bhkd->bhqk", q, k)
    if bias is not None:
        scores = scores + np.asarray(bias, dtype=np.float64)
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    weights = np.exp(scores - row_max)
    total = weights.sum(axis=-1, keepdims=True)
    weights = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)
    return np.einsum("bhqk,bhkd->bhqd", weights, v)


def causal(s):
    return np.tril(np.ones((s, s), dtype=bool))
