// Hearth's batched matrix kernel for WebAssembly SIMD.
//
// ggml offers every matrix product to `llamafile_sgemm` before running its
// own loop, which computes each output as an independent dot product
// (`ggml_vec_dot_*`): for a prompt of n tokens that unpacks every weight
// block n times and every activation block once per weight row. This
// kernel handles the batched case (n >= MIN_COLUMNS) for Q4_0 and Q8_0
// weights against Q8_0 activations, the pair ggml uses for those weights:
//
//   - each thread widens all n activation rows to 16-bit integers once
//     (with their block scales as floats), into its own scratch buffer;
//   - it takes its share of the weight rows, ROWS at a time, widens them
//     once to 16-bit integers, and runs them against every group of COLS
//     activation rows, so each widened value is used COLS or ROWS times;
//   - a 32-value block of one weight row and one activation row is four
//     `i32x4.dot_i16x8_s`; the ROWS x COLS integer sums of a block are
//     folded into one float vector per weight row (one lane per column),
//     then scaled by the two blocks' scales.
//
// It returns false for anything else (other types, a single token, f32
// activations before ggml quantizes them), and ggml then runs its own loop.
// Integer sums are exact, so the result differs from ggml's only in the
// order of float additions.

#include "ggml-cpu-impl.h"
#include "ggml-quants.h"

#include <wasm_simd128.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

constexpr int QK          = 32;  // values per Q4_0 and Q8_0 block
constexpr int ROWS        = 3;   // weight rows per tile
constexpr int COLS        = 4;   // activation rows per tile (one per lane)
constexpr int MIN_COLUMNS = 8;   // below this, ggml's dot products win

// IEEE half to float, by bits (the wasm build has no hardware conversion).
inline float half_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t) (h & 0x8000) << 16;
    uint32_t       exp  = (h >> 10) & 0x1f;
    uint32_t       man  = h & 0x3ff;
    uint32_t       bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000 | (man << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else {
        // Subnormal half: normalise the mantissa.
        exp = 113;
        while (!(man & 0x400)) {
            man <<= 1;
            exp--;
        }
        bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// One row of k blocks widened to int16, in value order, with its scales.
struct Widened {
    std::vector<int16_t> q;  // k * QK values
    std::vector<float>   d;  // k scales
};

// A Q8_0 row (activations or Q8_0 weights) widened into q and d.
inline void widen_q8_0(const block_q8_0 * x, int64_t k, int16_t * q, float * d) {
    for (int64_t b = 0; b < k; b++) {
        d[b]               = half_to_float(x[b].d);
        const v128_t lo    = wasm_v128_load(x[b].qs);
        const v128_t hi    = wasm_v128_load(x[b].qs + 16);
        int16_t *    out   = q + b * QK;
        wasm_v128_store(out, wasm_i16x8_extend_low_i8x16(lo));
        wasm_v128_store(out + 8, wasm_i16x8_extend_high_i8x16(lo));
        wasm_v128_store(out + 16, wasm_i16x8_extend_low_i8x16(hi));
        wasm_v128_store(out + 24, wasm_i16x8_extend_high_i8x16(hi));
    }
}

// A Q4_0 row widened: the low nibbles are values 0..15 of a block, the
// high nibbles 16..31, each stored with an offset of 8.
inline void widen_q4_0(const block_q4_0 * x, int64_t k, int16_t * q, float * d) {
    const v128_t mask  = wasm_i8x16_splat(0x0f);
    const v128_t eight = wasm_i8x16_splat(8);
    for (int64_t b = 0; b < k; b++) {
        d[b]             = half_to_float(x[b].d);
        const v128_t raw = wasm_v128_load(x[b].qs);
        const v128_t lo  = wasm_i8x16_sub(wasm_v128_and(raw, mask), eight);
        const v128_t hi  = wasm_i8x16_sub(wasm_u8x16_shr(raw, 4), eight);
        int16_t *    out = q + b * QK;
        wasm_v128_store(out, wasm_i16x8_extend_low_i8x16(lo));
        wasm_v128_store(out + 8, wasm_i16x8_extend_high_i8x16(lo));
        wasm_v128_store(out + 16, wasm_i16x8_extend_low_i8x16(hi));
        wasm_v128_store(out + 24, wasm_i16x8_extend_high_i8x16(hi));
    }
}

// Sum of the four lanes of each of a, b, c, d, as the lanes of one vector.
inline v128_t fold4(v128_t a, v128_t b, v128_t c, v128_t d) {
    const v128_t ab = wasm_i32x4_add(wasm_i32x4_shuffle(a, b, 0, 4, 2, 6), wasm_i32x4_shuffle(a, b, 1, 5, 3, 7));
    const v128_t cd = wasm_i32x4_add(wasm_i32x4_shuffle(c, d, 0, 4, 2, 6), wasm_i32x4_shuffle(c, d, 1, 5, 3, 7));
    return wasm_i32x4_add(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5), wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7));
}

// out[r][c] = dot(weight row r, activation row c) for ROWS x COLS rows of
// k widened blocks; w rows are k*QK apart, activation rows likewise. The
// weight scales are k per row; the activation scales are COLS per block,
// one per column, so a block's four load as one vector.
inline void tile(const int16_t * w, const float * wd, const int16_t * a, const float * ad, int64_t k,
                 v128_t out[ROWS]) {
    const int64_t stride = k * QK;
    v128_t        acc[ROWS];
    for (int r = 0; r < ROWS; r++) {
        acc[r] = wasm_f32x4_splat(0.0f);
    }
    for (int64_t b = 0; b < k; b++) {
        v128_t sum[ROWS][COLS];
        for (int part = 0; part < QK; part += 8) {
            const int64_t at = b * QK + part;
            v128_t        wv[ROWS];
            for (int r = 0; r < ROWS; r++) {
                wv[r] = wasm_v128_load(w + r * stride + at);
            }
            for (int c = 0; c < COLS; c++) {
                const v128_t av = wasm_v128_load(a + c * stride + at);
                for (int r = 0; r < ROWS; r++) {
                    const v128_t p = wasm_i32x4_dot_i16x8(wv[r], av);
                    sum[r][c]      = part == 0 ? p : wasm_i32x4_add(sum[r][c], p);
                }
            }
        }
        // The activation scales of this block, one per column.
        const v128_t da = wasm_v128_load(ad + b * COLS);
        for (int r = 0; r < ROWS; r++) {
            const v128_t s     = wasm_f32x4_convert_i32x4(fold4(sum[r][0], sum[r][1], sum[r][2], sum[r][3]));
            const v128_t scale = wasm_f32x4_mul(wasm_f32x4_splat(wd[r * k + b]), da);
            acc[r]             = wasm_f32x4_add(acc[r], wasm_f32x4_mul(s, scale));
        }
    }
    for (int r = 0; r < ROWS; r++) {
        out[r] = acc[r];
    }
}

static_assert(COLS == 4, "one activation row per lane of a float vector");

}  // namespace

// ggml's hook for batched products: C (n rows of m floats, ldc apart) =
// A (m rows of k blocks, lda blocks apart) times B (n rows of k blocks,
// ldb apart), each output a dot product of a row of A and a row of B.
// Called by every thread of the graph's pool with its ith and nth.
extern "C" bool llamafile_sgemm(const struct ggml_compute_params * params, int64_t m, int64_t n, int64_t k,
                                const void * A, int64_t lda, const void * B, int64_t ldb, void * C, int64_t ldc,
                                int Atype, int Btype, int Ctype) {
    if (Ctype != GGML_TYPE_F32 || Btype != GGML_TYPE_Q8_0 || (Atype != GGML_TYPE_Q4_0 && Atype != GGML_TYPE_Q8_0)) {
        return false;
    }
    if (n < MIN_COLUMNS || m < 1 || k < 1) {
        return false;
    }
    const int64_t stride = k * QK;

    // All activation rows, widened by this thread into its own buffers;
    // n is padded to whole tiles with copies of the last row.
    const int64_t       n_pad = (n + COLS - 1) / COLS * COLS;
    thread_local Widened act;
    act.q.resize(n_pad * stride);
    act.d.resize(n_pad * k);
    thread_local std::vector<float> row_d;
    row_d.resize(k);
    const block_q8_0 * b = (const block_q8_0 *) B;
    for (int64_t j = 0; j < n_pad; j++) {
        const int64_t src = j < n ? j : n - 1;
        widen_q8_0(b + src * ldb, k, act.q.data() + j * stride, row_d.data());
        float * d = act.d.data() + (j / COLS) * k * COLS + j % COLS;
        for (int64_t blk = 0; blk < k; blk++) {
            d[blk * COLS] = row_d[blk];
        }
    }

    // This thread's weight rows, in whole tiles.
    const int64_t tiles = (m + ROWS - 1) / ROWS;
    const int64_t t0    = tiles * params->ith / params->nth;
    const int64_t t1    = tiles * (params->ith + 1) / params->nth;
    thread_local Widened wt;
    wt.q.resize(ROWS * stride);
    wt.d.resize(ROWS * k);
    float * c = (float *) C;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t i0 = t * ROWS;
        for (int r = 0; r < ROWS; r++) {
            const int64_t i = i0 + r < m ? i0 + r : m - 1;
            if (Atype == GGML_TYPE_Q4_0) {
                widen_q4_0((const block_q4_0 *) A + i * lda, k, wt.q.data() + r * stride, wt.d.data() + r * k);
            } else {
                widen_q8_0((const block_q8_0 *) A + i * lda, k, wt.q.data() + r * stride, wt.d.data() + r * k);
            }
        }
        for (int64_t j0 = 0; j0 < n; j0 += COLS) {
            v128_t out[ROWS];
            tile(wt.q.data(), wt.d.data(), act.q.data() + j0 * stride, act.d.data() + j0 * k, k, out);
            for (int r = 0; r < ROWS && i0 + r < m; r++) {
                float lanes[COLS];
                wasm_v128_store(lanes, out[r]);
                for (int cc = 0; cc < COLS && j0 + cc < n; cc++) {
                    c[(j0 + cc) * ldc + i0 + r] = lanes[cc];
                }
            }
        }
    }
    return true;
}
