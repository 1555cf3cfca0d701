#!/bin/sh
# The tensor-core instructions in a module lowered with format=isa (the
# bf16 forward kernel): prints "mma=N ldmatrix=N ldmatrix_trans=N
# cp_async=N commit=N wait=N" for FILE. Used by mma-ptx.test and
# ptxas-resources.test.
count() { grep -o "$1" "$2" | wc -l | tr -d ' '; }
f=$1
echo "mma=$(count 'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32' "$f")" \
  "ldmatrix=$(count 'ldmatrix.sync.aligned.m8n8.x4.shared.b16' "$f")" \
  "ldmatrix_trans=$(count 'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16' "$f")" \
  "cp_async=$(count 'cp.async.cg.shared.global' "$f")" \
  "commit=$(count 'cp.async.commit_group' "$f")" \
  "wait=$(count 'cp.async.wait_group' "$f")"
