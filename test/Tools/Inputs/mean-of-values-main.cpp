// main() for Inputs/mean-of-values.mlir linked by cp-compile --emit=exe:
// V's rows are (j, 10 j), so every output row must be (2.5, 25).
#include <cstdint>
#include <cstdio>

struct Memref4 {
  float *allocated, *aligned;
  int64_t offset, sizes[4], strides[4];
};

extern "C" void _mlir_ciface_attention(Memref4 *q, Memref4 *k, Memref4 *v,
                                       Memref4 *o);

static Memref4 view(float *data, int64_t rows, int64_t cols) {
  Memref4 m = {
      data, data, 0, {1, 1, rows, cols}, {rows * cols, rows * cols, cols, 1}};
  return m;
}

int main() {
  float q[4 * 8] = {0}, k[6 * 8], v[6 * 2], o[4 * 2];
  for (int i = 0; i < 6 * 8; ++i)
    k[i] = (float)(i % 5) - 2.0f;
  for (int j = 0; j < 6; ++j) {
    v[2 * j] = (float)j;
    v[2 * j + 1] = 10.0f * j;
  }
  Memref4 mq = view(q, 4, 8), mk = view(k, 6, 8), mv = view(v, 6, 2),
          mo = view(o, 4, 2);
  _mlir_ciface_attention(&mq, &mk, &mv, &mo);
  for (int i = 0; i < 4; ++i)
    printf("row %d: %.4f %.4f\n", i, o[2 * i], o[2 * i + 1]);
  return 0;
}
