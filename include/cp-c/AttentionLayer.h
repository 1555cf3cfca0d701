/*===- AttentionLayer.h - build a CP attention layer from shapes --*- C -*-===//
 *
 * Writes the IR of one sharded attention layer, so that no MLIR has to be
 * typed by hand:
 *
 *   shard.grid @<grid>(shape = P)
 *   func.func @<name>(%q: [B,H,L,D], %k: [B,Hkv,L,D], %v: [B,Hkv,L,Dv]
 *                     [, %mask: [S,S]]) -> [B,H,L,Dv] {
 *     %o = cp.attention %q, %k, %v [explicit_mask %mask] on @<grid>
 *            grid_axes = [0] mask = ... [scheme = ...] : ...
 *   }
 *
 * with L = S / P. The arguments are this process's shards; an explicit mask
 * covers the global S x S positions (i1: true = attend, or an additive
 * bias of the element type).
 *
 * With `training` set, the function is a training step: it also takes the
 * loss gradient %do [B,H,L,Dv] and returns o and the f32 gradients dq, dk,
 * dv of this rank's shards:
 *
 *   %o, %lse = cp.attention ... -> [B,H,L,Dv], [B,H,L] f32
 *   %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do ...
 *   return %o, %dq, %dk, %dv
 *
 *===----------------------------------------------------------------------===*/

#ifndef CP_C_ATTENTIONLAYER_H
#define CP_C_ATTENTIONLAYER_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum CpExplicitMaskKind {
  CpExplicitMaskNone = 0,
  CpExplicitMaskBool = 1, /* tensor<SxSxi1>, true = attend */
  CpExplicitMaskBias = 2  /* tensor<SxSxT>, added to the scaled scores */
} CpExplicitMaskKind;

typedef enum CpSequenceLayout {
  CpSequenceContiguous = 0, /* rank r holds rows [r*L, (r+1)*L) */
  CpSequenceZigzag = 1      /* rank r holds chunks r and 2P-1-r of 2P */
} CpSequenceLayout;

typedef struct CpAttentionLayerSpec {
  int64_t batch;        /* B */
  int64_t heads;        /* H */
  int64_t kvHeads;      /* Hkv, dividing H */
  int64_t seqLen;       /* S, the global sequence length */
  int64_t headDim;      /* D */
  int64_t valueDim;     /* Dv */
  int64_t groupSize;    /* P, dividing S */
  MlirType elementType; /* f32, f16 or bf16 */
  MlirAttribute mask;   /* #cp.mask, or null for none */
  MlirAttribute scheme; /* #cp.scheme, or null: chosen by a pass */
  CpExplicitMaskKind explicitMask;
  CpSequenceLayout layout; /* how the arguments are sharded */
  MlirStringRef funcName;  /* empty: "attention" */
  MlirStringRef gridName;  /* empty: "cp" */
  int training;            /* nonzero: the forward and its backward */
} CpAttentionLayerSpec;

/* A spec with B = 1, f32, no masks, no scheme, the contiguous layout and
 * the forward only; sizes are 0 and must be set. */
MLIR_CAPI_EXPORTED CpAttentionLayerSpec
cpAttentionLayerSpecGetDefault(MlirContext ctx);

/* Builds and verifies the layer's module. On a bad spec (a size that is
 * not positive, S not divisible by P, H not divisible by Hkv, an element
 * type other than f32/f16/bf16, a scheme whose constraints fail) it
 * reports why through `onDiagnostic` and returns a null module. */
MLIR_CAPI_EXPORTED MlirModule
cpAttentionLayerBuild(MlirContext ctx, const CpAttentionLayerSpec *spec,
                      MlirStringCallback onDiagnostic, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* CP_C_ATTENTIONLAYER_H */
