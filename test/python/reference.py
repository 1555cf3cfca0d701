"""Plain full attention in float64 numpy: the independent reference the
Python tests compare against (no cp-mlir code involved)."""

import numpy as np


def _weights(q, k, v, allowed=None, bias=None, scale=None, sinks=None):
    """q, K and V with the K/V heads repeated for GQA (float64), the scale,
    and the softmax weights P of scale * q k^T + bias under `allowed`
    (fully masked rows all 0). With `sinks` ([H]), each row's softmax has
    one more column, the head's sink logit, whose weight is dropped."""
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
    if sinks is not None:
        column = np.broadcast_to(
            np.asarray(sinks, dtype=np.float64)[:, None, None],
            scores.shape[:-1] + (1,))
        scores = np.concatenate([scores, column], axis=-1)
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    weights = np.exp(scores - row_max)
    total = weights.sum(axis=-1, keepdims=True)
    p = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)
    if sinks is not None:
        p = p[..., :-1]
    return q, k, v, scale, p


def attention(q, k, v, allowed=None, bias=None, scale=None, sinks=None):
    """softmax(scale * q k^T + bias) v over [B, H, S, D] arrays, with GQA
    (k/v heads repeated), `allowed` a boolean [S, S] mask (True = attend),
    fully masked rows giving 0, and `sinks` ([H]) one more softmax column
    per row with no value row."""
    _, _, v, _, p = _weights(q, k, v, allowed, bias, scale, sinks)
    return np.einsum("bhqk,bhkd->bhqd", p, v)


def causal(s):
    return np.tril(np.ones((s, s), dtype=bool))


def attention_grad(q, k, v, grad_output, allowed=None, scale=None):
    """The gradients (dq, dk, dv) of sum(attention(q, k, v, allowed) *
    grad_output), written out from the softmax's derivative: with P the
    weights, dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dP * P)),
    dQ = scale dS K, dK = scale dS^T Q. GQA: the heads of a group add their
    dk/dv into the group's one head."""
    groups = np.shape(q)[1] // np.shape(k)[1]
    q, ke, ve, scale, p = _weights(q, k, v, allowed, None, scale)
    do = np.asarray(grad_output, dtype=np.float64)
    dv = np.einsum("bhqk,bhqd->bhkd", p, do)
    dp = np.einsum("bhqd,bhkd->bhqk", do, ve)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
    dq = scale * np.einsum("bhqk,bhkd->bhqd", ds, ke)
    dk = scale * np.einsum("bhqk,bhqd->bhkd", ds, q)

    def per_group(x):
        b, h, s, d = x.shape
        return x.reshape(b, h // groups, groups, s, d).sum(axis=2)

    return dq, per_group(dk), per_group(dv)
