// Checks Hearth's batched kernel (gemm-wasm.cpp) against ggml's own
// WebAssembly dot products, which it replaces for prompts: random Q4_0 and
// Q8_0 weights times random Q8_0 activations, in shapes with partial tiles,
// split over 1 to 3 threads' shares. The build runs it in Node before the
// engine is linked; it prints what it compared and exits 1 on a mismatch.

#include "ggml-cpu-impl.h"
#include "ggml-cpu.h"
#include "quants.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

extern "C" bool llamafile_sgemm(const struct ggml_compute_params * params, int64_t m, int64_t n, int64_t k,
                                const void * A, int64_t lda, const void * B, int64_t ldb, void * C, int64_t ldc,
                                int Atype, int Btype, int Ctype);

namespace {

std::mt19937 rng(1234);
int          reported = 0;  // mismatches printed so far

// A half with a random mantissa and an exponent giving 2^-10 .. 2^-4.
uint16_t random_scale() {
    const uint16_t exp = 5 + rng() % 7;
    return (uint16_t) ((exp << 10) | (rng() & 0x3ff) | ((rng() & 1) << 15));
}

void fill(block_q8_0 * x, int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        x[i].d = random_scale();
        for (auto & q : x[i].qs) {
            q = (int8_t) ((int) (rng() % 255) - 127);
        }
    }
}

void fill(block_q4_0 * x, int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        x[i].d = random_scale();
        for (auto & q : x[i].qs) {
            q = (uint8_t) (rng() & 0xff);
        }
    }
}

// One product C = A x B of the given shape; returns the number of wrong
// outputs. The rows of A and B are padded (lda, ldb > k) and C's rows too.
template <typename Block>
int check(int type, int64_t m, int64_t n, int64_t k, int nth) {
    const int64_t           lda = k + 1, ldb = k + 2, ldc = m + 3;
    std::vector<Block>      a(m * lda);
    std::vector<block_q8_0> b(n * ldb);
    fill(a.data(), (int64_t) a.size());
    fill(b.data(), (int64_t) b.size());
    std::vector<float> c(n * ldc, NAN);
    for (int ith = 0; ith < nth; ith++) {
        ggml_compute_params p = {};
        p.ith                 = ith;
        p.nth                 = nth;
        if (!llamafile_sgemm(&p, m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, type, GGML_TYPE_Q8_0,
                             GGML_TYPE_F32)) {
            std::printf("FAIL: the kernel declined %s m=%lld n=%lld k=%lld\n", ggml_type_name((ggml_type) type),
                        (long long) m, (long long) n, (long long) k);
            return 1;
        }
    }
    int bad = 0;
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < m; i++) {
            float want = 0;
            if (type == GGML_TYPE_Q4_0) {
                ggml_vec_dot_q4_0_q8_0((int) (k * 32), &want, 0, &a[i * lda], 0, &b[j * ldb], 0, 1);
            } else {
                ggml_vec_dot_q8_0_q8_0((int) (k * 32), &want, 0, &a[i * lda], 0, &b[j * ldb], 0, 1);
            }
            const float got = c[j * ldc + i];
            // Only the order of float additions differs.
            if (!(std::fabs(got - want) <= 1e-5f * (1.0f + std::fabs(want)) * (float) k)) {
                if (bad++ == 0 && reported++ < 5) {
                    std::printf("FAIL: %s m=%lld n=%lld k=%lld threads=%d C[%lld][%lld] = %g, ggml says %g\n",
                                ggml_type_name((ggml_type) type), (long long) m, (long long) n, (long long) k, nth,
                                (long long) j, (long long) i, got, want);
                }
            }
        }
    }
    return bad;
}

}  // namespace

int main() {
    // ggml's dot products read half-precision scales through its table.
    ggml_cpu_init();
    int       bad      = 0;
    int       products = 0;
    const int shapes[][3] = {
        { 1,   8,   1  },
        { 5,   9,   3  },
        { 64,  128, 18 },
        { 33,  13,  48 },
        { 192, 40,  18 },
    };
    for (const auto & s : shapes) {
        for (int nth = 1; nth <= 3; nth++) {
            bad += check<block_q4_0>(GGML_TYPE_Q4_0, s[0], s[1], s[2], nth);
            bad += check<block_q8_0>(GGML_TYPE_Q8_0, s[0], s[1], s[2], nth);
            products += 2 * s[0] * s[1];
        }
    }
    // What it leaves to ggml: one token, and types it has no code for.
    ggml_compute_params p = {};
    p.nth                 = 1;
    block_q8_0 one[4]     = {};
    float      out[4];
    if (llamafile_sgemm(&p, 1, 1, 1, one, 1, one, 1, out, 1, GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_F32) ||
        llamafile_sgemm(&p, 1, 8, 1, one, 1, one, 1, out, 1, GGML_TYPE_Q4_K, GGML_TYPE_Q8_K, GGML_TYPE_F32) ||
        llamafile_sgemm(&p, 1, 8, 1, one, 1, one, 1, out, 1, GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32)) {
        std::printf("FAIL: the kernel took a product it has no code for\n");
        bad++;
    }
    if (bad) {
        std::printf("%d outputs differ from ggml's dot products\n", bad);
        return 1;
    }
    std::printf("gemm-wasm: %d outputs equal ggml's dot products (Q4_0 and Q8_0, 1 to 3 threads)\n", products);
    return 0;
}
