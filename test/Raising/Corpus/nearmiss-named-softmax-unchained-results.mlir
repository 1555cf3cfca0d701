// Source: unidentified public GitHub repository (779-char .mlir file returned by the code index by content only; a hand-written "attention" example using named linalg ops).
// Form: NEAR-MISS (named ops): linalg.matmul_transpose_b(Q,K) -> linalg.softmax dimension(1) -> linalg.matmul(P,V) on 2-D 1024x128 f32, BUT every op's tensor result is discarded: softmax reads %s (the uninitialised tensor.empty, not the matmul result), the PV matmul reads %m (another tensor.empty), and the function returns %o, a tensor.empty. On tensors this is not attention at all (memref-style destination thinking). A use-def based raiser must NOT fire; a raiser keyed on "op kinds in sequence" would wrongly fire.
// Adapted: `linalg.matmul_transpose_b` is no longer a named op in MLIR 22, so it was rewritten as `linalg.matmul indexing_maps = [(m,n,k)->(m,k), (m,n,k)->(n,k), (m,n,k)->(m,n)]` (same semantics); everything else verbatim.
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 report-near-misses=true" -o %t 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t
// Status: near miss. Not attention: the named ops write into each other's inits but no result feeds the next op (every result is dropped), so there is no dataflow from the scores to the output.
func.func @attention(
    %q : tensor<1024x128xf32>,
    %k : tensor<1024x128xf32>,
    %v : tensor<1024x128xf32>
) -> tensor<1024x128xf32>
{
    %s = tensor.empty(): tensor<1024x1024xf32>
    %m = tensor.empty(): tensor<1024x1024xf32>
    %o = tensor.empty(): tensor<1024x128xf32>

    linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%q, %k : tensor<1024x128xf32>, tensor<1024x128xf32>) 
        outs(%s: tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    linalg.softmax
        dimension(1)
        ins(%s:  tensor<1024x1024xf32>)
        outs(%m:  tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    linalg.matmul
        ins(%m, %v: tensor<1024x1024xf32>, tensor<1024x128xf32>)
        outs(%o: tensor<1024x128xf32>) -> tensor<1024x128xf32>
    func.return %o: tensor<1024x128xf32>
}

// REMARK: nearmiss-named-softmax-unchained-results.mlir:24:5: remark: cp-raise-attention: not raised: the contraction accumulates into an init that is not zero
// IR-NOT: cp.attention
