"""AttentionLayer: the IR of a sharded attention layer, from shapes."""

from dataclasses import dataclass
from typing import Optional

from .ir import default_context


def split_parameter(text):
    """'hybrid(2)' -> ('hybrid', 2); 'causal' -> ('causal', 0)."""
    text = text.strip()
    if text.endswith(")") and "(" in text:
        kind, value = text[:-1].split("(", 1)
        try:
            return kind.strip(), int(value)
        except ValueError:
            raise ValueError(f"cp_mlir: '{text}' needs an integer parameter") from None
    return text, 0


@dataclass(frozen=True)
class AttentionLayer:
    """One cp.attention over a sequence of S tokens sharded across P ranks.

    Shapes follow the cp contract (BHSD): every rank passes its contiguous
    shards q [B, H, S/P, D], k [B, Hkv, S/P, D], v [B, Hkv, S/P, Dv] and
    gets o [B, H, S/P, Dv]. ``mask`` is 'none', 'causal' or
    'sliding_window(W)', evaluated on global positions. ``explicit_mask``
    adds a global [S, S] operand: 'bool' (True = attend) or 'bias'
    (added to the scaled scores). ``scheme`` ('allgather', 'ulysses',
    'hybrid(u)', 'head_tail', 'ring', 'zigzag', 'auto') may be left to
    compile time. ``layout='zigzag'`` states that each rank's shards are
    chunks r and 2P-1-r of 2P (zigzag_order gives the token order).
    ``training=True`` makes the layer a training step: it also takes the
    loss gradient ``do`` (the shape of o) and returns o and the f32
    gradients dq, dk, dv (cp.attention with its lse, then
    cp.attention_grad, both under the same scheme).
    """

    H: int
    S: int
    D: int
    P: int
    Hkv: Optional[int] = None
    Dv: Optional[int] = None
    B: int = 1
    mask: str = "none"
    scheme: Optional[str] = None
    dtype: str = "f32"
    explicit_mask: str = "none"
    layout: str = "contiguous"
    name: str = "attention"
    grid: str = "cp"
    training: bool = False

    @property
    def kv_heads(self):
        return self.H if self.Hkv is None else self.Hkv

    @property
    def value_dim(self):
        return self.D if self.Dv is None else self.Dv

    @property
    def argument_names(self):
        names = ["q", "k", "v"] + ([] if self.explicit_mask == "none" else ["mask"])
        return names + (["do"] if self.training else [])

    @property
    def result_names(self):
        return ["o", "dq", "dk", "dv"] if self.training else ["o"]

    def global_shapes(self):
        """Shapes of the full (unsharded) inputs and output, by name."""
        b, s = self.B, self.S
        shapes = {
            "q": (b, self.H, s, self.D),
            "k": (b, self.kv_heads, s, self.D),
            "v": (b, self.kv_heads, s, self.value_dim),
            "o": (b, self.H, s, self.value_dim),
        }
        if self.explicit_mask != "none":
            shapes["mask"] = (s, s)
        if self.training:
            for grad, of in (("do", "o"), ("dq", "q"), ("dk", "k"), ("dv", "v")):
                shapes[grad] = shapes[of]
        return shapes

    def build(self, context=None):
        """The layer's module (shard.grid + func.func around cp.attention),
        verified. Raises MLIRError naming what is wrong with the shapes."""
        ctx = context or default_context()
        mask = ctx.mask(*split_parameter(self.mask))
        scheme = ctx.scheme(*split_parameter(self.scheme)) if self.scheme else None
        return ctx.attention_layer(
            B=self.B, H=self.H, Hkv=self.kv_heads, S=self.S, D=self.D,
            Dv=self.value_dim, P=self.P, dtype=self.dtype, mask=mask,
            scheme=scheme, explicit_mask=self.explicit_mask,
            layout=self.layout, func_name=self.name, grid_name=self.grid,
            training=self.training)


def zigzag_order(S, P):
    """The global positions in zigzag order: taking S tokens in this order
    and splitting them contiguously over P ranks gives rank r chunks r and
    2P-1-r of 2P. Apply it to every tensor indexed by position (tokens,
    position ids, labels) and its inverse (numpy.argsort) to outputs."""
    if S % (2 * P):
        raise ValueError(f"cp_mlir: the zigzag layout needs S ({S}) divisible by 2P ({2 * P})")
    c = S // (2 * P)
    order = []
    for r in range(P):
        order += list(range(r * c, (r + 1) * c))
        order += list(range((2 * P - 1 - r) * c, (2 * P - r) * c))
    return order
