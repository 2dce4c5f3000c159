/*===- attn_jit.h - attn-jit runtime, C API -------------------------------===*
 *
 * Forward attention, compiled on the first call for a configuration and
 * cached (in memory and on disk); later calls only launch. Every function
 * returns a status; on failure attn_last_error() says what and why, outputs
 * are left untouched when the arguments fail validation, and the process
 * never aborts.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ATTN_JIT_ATTN_JIT_H
#define ATTN_JIT_ATTN_JIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTN_JIT_API __attribute__((visibility("default")))

typedef enum attn_status {
  ATTN_OK = 0,
  ATTN_ERROR_INVALID_ARGUMENT = 1, /* bad sizes, strides, pointers, dtype */
  ATTN_ERROR_UNSUPPORTED = 2,      /* valid, but not supported (head dim, arch) */
  ATTN_ERROR_NO_DRIVER = 3,        /* libcuda.so.1 could not be loaded */
  ATTN_ERROR_NO_DEVICE = 4,        /* the driver reports no usable GPU */
  ATTN_ERROR_CUDA = 5,             /* a CUDA driver call failed */
  ATTN_ERROR_COMPILE = 6,          /* the compiler failed (a bug: report it) */
  ATTN_ERROR_INTERNAL = 7
} attn_status;

typedef enum attn_dtype {
  ATTN_DTYPE_BF16 = 0,
  ATTN_DTYPE_F16 = 1,
  ATTN_DTYPE_F32 = 2, /* host device only */
  ATTN_DTYPE_E4M3 = 3 /* FP8 float8_e4m3fn: attn_forward_fp8 only */
} attn_dtype;

typedef enum attn_mask {
  ATTN_MASK_NONE = 0,
  ATTN_MASK_CAUSAL = 1,              /* query i sees keys j <= i (PyTorch) */
  ATTN_MASK_CAUSAL_BOTTOM_RIGHT = 2  /* j <= i + Nk - Nq (FlashAttention) */
} attn_mask;

typedef enum attn_device {
  ATTN_DEVICE_CUDA = 0, /* pointers are CUDA device pointers */
  ATTN_DEVICE_HOST = 1  /* pointers are host pointers; runs on the CPU */
} attn_device;

/* Attention variants (FlexAttention's score_mod / mask_mod, named): flags that
 * combine. Query i and key j are positions in Q and K; the diagonal of query
 * i is key i + shift, shift = Nk - Nq with ATTN_MASK_CAUSAL_BOTTOM_RIGHT and
 * 0 otherwise. The parameters are kernel arguments: changing a value never
 * recompiles, changing the flags does (once). Pointers are on the device of
 * the call. */
typedef enum attn_variant_flags {
  /* key j is seen when -window_left <= j - (i + shift) <= window_right; a
   * negative bound is unbounded on that side (Mistral: left W - 1, causal) */
  ATTN_VARIANT_WINDOW = 1 << 0,
  /* with a causal mask, keys j < prefix_len are seen by every query too */
  ATTN_VARIANT_PREFIX_LM = 1 << 1,
  /* key j is seen only when q_doc_ids[i] == kv_doc_ids[j]: packed sequences,
   * so the ids must never decrease along the sequence (each query tile visits
   * only the keys of its documents, found by a search); kv_doc_ids NULL
   * with Nq = Nk: q_doc_ids for both */
  ATTN_VARIANT_DOCUMENT = 1 << 2,
  /* score += alibi_slopes[h] * (j - i) (h: the query head) */
  ATTN_VARIANT_ALIBI = 1 << 3,
  /* score += bias[i * bias_strides[0] + j * bias_strides[1]], every B and H */
  ATTN_VARIANT_BIAS = 1 << 4,
  /* score = softcap * tanh(score / softcap), after the additive terms */
  ATTN_VARIANT_SOFTCAP = 1 << 5
} attn_variant_flags;

/* The value of one capture of a user's mods (attn_variant.mods), of the type
 * its functions declare: a scalar (f32: f32; i32, i64 or index: i64) or a
 * memref of f32 or int32 elements of rank 1 to 4 (data, sizes, strides in
 * elements, on the device of the call). */
typedef struct attn_capture {
  float f32;
  int64_t i64;
  const void *data;
  int64_t sizes[4], strides[4];
} attn_capture;

/* The score is scale * q.k plus the additive terms, soft-capped; masked keys
 * are excluded; a row that sees no key gives O = 0 and LSE = -inf. */
typedef struct attn_variant {
  uint32_t flags;                    /* attn_variant_flags; 0: plain */
  int64_t window_left, window_right; /* ATTN_VARIANT_WINDOW */
  int64_t prefix_len;                /* ATTN_VARIANT_PREFIX_LM, >= 0 */
  float softcap;                     /* ATTN_VARIANT_SOFTCAP, finite, > 0 */
  const float *alibi_slopes;         /* ATTN_VARIANT_ALIBI: (H) f32 */
  const int32_t *q_doc_ids;          /* ATTN_VARIANT_DOCUMENT: (Nq) int32 */
  const int32_t *kv_doc_ids;         /* (Nk) int32 */
  const float *bias;                 /* ATTN_VARIANT_BIAS: (Nq, Nk) f32 */
  int64_t bias_strides[2];           /* in elements, >= 0 */
  /* A user's own variant as MLIR text, compiled on the first call (and
   * cached by its canonical form, never by a capture's value):
   *   func.func @score_mod(%score: f32, %b: index, %h: index, %q_idx: index,
   *                        %kv_idx: index, <captures>) -> f32
   *   func.func @mask_mod(%b: index, %h: index, %q_idx: index,
   *                       %kv_idx: index, <captures>) -> i1   (true: seen)
   * either or both, with the same captures (f32, i32, i64, index; memref<?x
   * f32 or i32, strided<[?...], offset: ?>> of rank 1 to 4), pure arith/math
   * ops and memref.load of a capture. A mask_mod combines with the named
   * masks (and); a score_mod excludes the named score variants. Text that
   * does not parse or verify: ATTN_ERROR_INVALID_ARGUMENT with the
   * diagnostics. NULL: none. */
  const char *mods;
  const attn_capture *captures; /* num_captures values, in argument order */
  int64_t num_captures;         /* at most 16 */
} attn_variant;

/* Forward attention O = softmax(scale * Q K^T + mask) V, per (batch, head).
 * Strides are in elements, for the (batch, head, seq, dim) index order, so
 * both the (B, H, N, D) and the (B, N, H, D) layouts are expressed by them;
 * the innermost (dim) stride must be 1.
 *
 * Grouped-query attention (GQA, and MQA with kv_heads = 1): K and V have
 * Hkv = kv_heads heads, which must divide H (1 <= Hkv <= H, H % Hkv == 0;
 * 0 means Hkv = H, plain multi-head attention). Query head h attends with
 * K/V head h / (H / Hkv), so each group of H / Hkv consecutive query heads
 * shares one K/V head, as PyTorch's scaled_dot_product_attention with
 * enable_gqa=True. The same compiled kernel serves every Hkv.
 *
 * Outputs (O, LSE) must not share a byte with each other or with any input
 * (Q, K, V, the variant's tensors and captures), judged by each tensor's
 * extent (from its pointer to the end of its last element):
 * ATTN_ERROR_INVALID_ARGUMENT otherwise. This includes O == Q in place: safe only if every kernel
 * (host, mma.sync, wgmma, packed GQA) reads all of a query tile's Q before
 * any of its O is written, which is not proven, so it is refused. Inputs
 * may share memory (K == V). */
typedef struct attn_fwd_args {
  const void *q;  /* (B, H, Nq, D) */
  const void *k;  /* (B, Hkv, Nk, D) */
  const void *v;  /* (B, Hkv, Nk, D) */
  void *o;        /* (B, H, Nq, D) */
  float *lse;     /* (B, H, Nq) natural log-sum-exp, f32; may be NULL */
  int64_t batch, heads, kv_heads; /* kv_heads: Hkv dividing H; 0: H */
  int64_t seqlen_q, seqlen_k, head_dim;
  int64_t q_strides[4], k_strides[4], v_strides[4], o_strides[4];
  int64_t lse_strides[3];
  attn_dtype dtype;
  attn_mask mask;
  float scale;    /* any finite value, negative too; 0: 1/sqrt(head_dim) */
  attn_device device;
  void *stream;   /* CUstream; NULL: the default stream */
  /* Tile sizes, 0: the default for the head dim. On CUDA block_m must be
   * 16 x 4 (64) and block_n a multiple of 16; the host takes any size. */
  int64_t block_m, block_n;
  attn_variant variant; /* zero: plain attention */
} attn_fwd_args;

/* Fills the strides of a contiguous (B, H, N, D) layout into `args`, from
 * its sizes (heads, kv_heads, seqlen_q, seqlen_k, head_dim); LSE is (B, H, Nq). */
ATTN_JIT_API void attn_set_bhnd_strides(attn_fwd_args *args);
/* The same for a contiguous (B, N, H, D) layout (LSE stays (B, H, Nq)). */
ATTN_JIT_API void attn_set_bnhd_strides(attn_fwd_args *args);

ATTN_JIT_API attn_status attn_forward(const attn_fwd_args *args);

/* Variable-length batches (FlashAttention's flash_attn_varlen_func): B
 * sequences of different lengths packed along the rows, with no padding.
 * Sequence b holds the query rows [cu_seqlens_q[b], cu_seqlens_q[b + 1]) of
 * Q and O and the key rows [cu_seqlens_k[b], cu_seqlens_k[b + 1]) of K and
 * V, and attends only to its own keys. `fwd` holds the rest, read as for
 * attn_forward with these meanings:
 *   batch      B >= 1, the number of sequences;
 *   seqlen_q   total_q, the rows of the packed Q and O (H, D per row);
 *   seqlen_k   total_k, the rows of the packed K and V;
 *   q/k/v/o    (total, heads, D): strides in the (batch, head, row, dim)
 *              order as for attn_forward; the batch stride [0] is ignored
 *              (attn_set_varlen_strides fills a contiguous layout);
 *   lse        (H, total_q) f32, FlashAttention's layout (strides [1] head,
 *              [2] row; [0] ignored), or NULL.
 * Every mask and variant applies per sequence with positions relative to
 * its start: ATTN_MASK_CAUSAL_BOTTOM_RIGHT is j <= i + Nk_b - Nq_b (chunked
 * prefill), a window or ALiBi distance is within the sequence, a user mod
 * sees b = the sequence and positions in it. ATTN_VARIANT_DOCUMENT and
 * ATTN_VARIANT_BIAS index per-position arrays and are not supported here
 * (ATTN_ERROR_UNSUPPORTED): sequences already separate the documents. A
 * sequence with no keys gives O = 0 and LSE = -inf for its rows.
 *
 * Lengths are data: one kernel serves every batch (the launch covers B x H x
 * ceil(max_seqlen_q / block_m) query tiles, or, when the H / Hkv query heads
 * of a K/V head times max_seqlen_q fit one tile (decoding), B x Hkv x
 * ceil(H / Hkv * max_seqlen_q / block_m) tiles that hold a group's heads;
 * tiles past a sequence's length end at once). The offsets are int32 on the device of the call. On the
 * host they are checked (0 first, non-decreasing, the last <= total, every
 * length <= max_seqlen); on CUDA they cannot be, and the kernel clamps
 * them: each sequence's rows are taken as [min(max(cu[b], 0), total),
 * min(max(cu[b + 1], start), total)), so wrong offsets give wrong results
 * but never read or write outside Q, K, V, O and LSE; query rows of a
 * sequence past max_seqlen_q are not written (with packed heads: rows of
 * its last heads). The arrays themselves must
 * hold B + 1 readable int32 values. Only the forward pass. */
typedef struct attn_varlen_args {
  attn_fwd_args fwd;
  const int32_t *cu_seqlens_q; /* (B + 1) int32 */
  const int32_t *cu_seqlens_k; /* (B + 1) int32 */
  int64_t max_seqlen_q;        /* >= every query length, <= total_q */
  int64_t max_seqlen_k;        /* >= every key length, <= total_k */
} attn_varlen_args;

/* Fills the strides of contiguous (total, H, D) Q, O and (total, Hkv, D) K, V
 * from fwd's sizes, and the LSE's for a contiguous (H, total_q). */
ATTN_JIT_API void attn_set_varlen_strides(attn_varlen_args *args);

ATTN_JIT_API attn_status attn_forward_varlen(const attn_varlen_args *args);

/* A paged K/V cache (vLLM's layout; FlashAttention's page_table, FlashInfer's
 * paged KV): keys and values live in pages of page_size rows, K and V each
 * (num_pages, page_size, kv_heads, head_dim), and sequence b's key j is row
 * j % page_size of page block_table[b * block_table_stride + j / page_size].
 * Queries are packed as for attn_forward_varlen (cu_seqlens_q; decode is
 * every length 1, chunked prefill any), and sequence b sees its first
 * seqused_k[b] keys. `fwd` is read as for attn_forward_varlen except:
 *   seqlen_k   ignored (the key counts are seqused_k);
 *   k/v        the caches; k_strides/v_strides in the (page, head, row, dim)
 *              order, any strides with a unit innermost one
 *              (attn_set_paged_strides fills the contiguous vLLM layout).
 * page_size must be a multiple of 16 from 16 to 256 (others are
 * ATTN_ERROR_UNSUPPORTED); it is compiled into the kernel, so each page size
 * is a kernel of its own, and lengths, tables and page counts are data.
 * GQA (kv_heads dividing heads), every mask per sequence (bottom-right: the
 * sequence's last query sees its last key) and the window, prefix-LM,
 * ALiBi and softcap variants and user mods apply as for varlen;
 * ATTN_VARIANT_DOCUMENT and ATTN_VARIANT_BIAS are ATTN_ERROR_UNSUPPORTED.
 *
 * The tables are int32 on the device of the call. On the host every entry
 * a sequence uses is checked (seqused_k[b] in [0, max_pages * page_size],
 * its pages in [0, num_pages)); on CUDA they cannot be, and the kernel
 * clamps them: a key count to [0, max_pages * page_size], a page number to
 * [0, num_pages), so wrong tables give wrong results but never read outside
 * the block table or the caches. Only the forward pass. */
typedef struct attn_paged_args {
  attn_fwd_args fwd;
  const int32_t *cu_seqlens_q; /* (B + 1) int32, as for varlen */
  int64_t max_seqlen_q;        /* >= every query length, <= total_q */
  const int32_t *block_table;  /* (B, max_pages) int32 page numbers */
  int64_t max_pages;           /* block table columns, >= 1 */
  int64_t block_table_stride;  /* elements between rows; 0: max_pages */
  const int32_t *seqused_k;    /* (B) int32 key counts */
  int64_t num_pages;           /* pages in each of K and V, >= 1 */
  int64_t page_size;           /* rows per page: 16, 32, ..., 256 */
} attn_paged_args;

/* Fills contiguous strides: Q, O and the LSE as attn_set_varlen_strides,
 * K and V as (num_pages, page_size, kv_heads, head_dim). */
ATTN_JIT_API void attn_set_paged_strides(attn_paged_args *args);

ATTN_JIT_API attn_status attn_forward_paged(const attn_paged_args *args);

/* FP8 forward (FlashAttention-3's FP8 path): Q, K, V hold float8_e4m3fn
 * values that per-tensor factors dequantise -- the attention is that of
 * q_descale * Q, k_descale * K and v_descale * V (each factor finite and
 * > 0) -- O is bf16 and the LSE that of the dequantised scores. `fwd` is
 * read as for attn_forward with dtype ATTN_DTYPE_E4M3 and these rules:
 *   v_strides  V's keys are contiguous: v_strides[2] == 1 (FlashAttention-3's
 *              V_colmajor; a (B, Hkv, D, Nk) tensor seen as (B, Hkv, Nk, D)),
 *              since FP8 tensor cores read P.V's V along the keys;
 *   strides    on CUDA every other stride is a multiple of 16 elements
 *              (16-byte pieces), Nk's dim stride v_strides[3] too;
 *   mask       none or causal; no variant (ATTN_ERROR_UNSUPPORTED).
 * CUDA: sm_90a (wgmma), head dims that are multiples of 32 up to 256. P is
 * rounded to e4m3 for P.V after a scaling by 2^8 (docs/design.md). */
typedef struct attn_fp8_args {
  attn_fwd_args fwd;
  float q_descale, k_descale, v_descale;
} attn_fp8_args;

ATTN_JIT_API attn_status attn_forward_fp8(const attn_fp8_args *args);

/* Gradients of attn_forward: given dO, the gradient of a loss with respect to
 * O, writes dQ, dK and dV (dK and dV of a K/V head sum the gradients of the
 * query heads that share it). `fwd` holds the forward call's arguments: Q, K,
 * V, its output O and log-sum-exp LSE (required, as attn_forward wrote them),
 * sizes, strides, dtype, mask, scale and variant; the probabilities are
 * recomputed from the LSE, so no N x N matrix is ever stored. By default the
 * result is deterministic: the same inputs give bit-identical gradients (no
 * atomics); attn_set_deterministic(0) lets it add dQ with atomics instead.
 * The row terms rowsum(dO * O) need B * H * Nq floats of workspace, which the
 * runtime allocates. dQ, dK and dV must not share a byte with each other or
 * with Q, K, V, O, LSE, dO or the variant's tensors and captures (dQ == Q
 * included: the K/V tiles' kernel reads Q after the query tiles' kernel
 * wrote dQ); otherwise ATTN_ERROR_INVALID_ARGUMENT. A user score_mod must be
 * differentiable by the compiler (arith add/sub/mul/div/neg/max/min/select,
 * math tanh/exp/exp2/log/log2/sqrt/absf on the score); otherwise
 * ATTN_ERROR_INVALID_ARGUMENT. It runs on both devices (on CUDA as two
 * kernels on the call's stream, the workspace allocated stream-ordered).
 * fwd.block_m / block_n: a CTA of either kernel owns block_m rows (queries,
 * or keys) and steps over block_n rows of the other side. */
typedef struct attn_bwd_args {
  attn_fwd_args fwd;
  const void *d_o; /* (B, H, Nq, D), the dtype of Q */
  void *dq;        /* (B, H, Nq, D) */
  void *dk, *dv;   /* (B, Hkv, Nk, D) */
  int64_t do_strides[4], dq_strides[4], dk_strides[4], dv_strides[4];
} attn_bwd_args;

/* Sets dO's, dQ's, dK's and dV's strides to those of O, Q, K and V. */
ATTN_JIT_API void attn_set_bwd_strides_like_fwd(attn_bwd_args *args);

ATTN_JIT_API attn_status attn_backward(const attn_bwd_args *args);

/* Message of the last failure on this thread ("" if none). */
ATTN_JIT_API const char *attn_last_error(void);
ATTN_JIT_API const char *attn_status_string(attn_status status);

typedef struct attn_stats {
  uint64_t compiles;        /* kernels built by the compiler */
  uint64_t memory_hits;     /* calls served by the in-memory cache */
  uint64_t disk_hits;       /* kernels loaded from the disk cache */
  uint64_t disk_misses;     /* disk lookups that found nothing usable */
  uint64_t disk_rejected;   /* corrupt, truncated or foreign entries */
  uint64_t launches;
  double compile_ms_total;  /* time spent compiling */
} attn_stats;

ATTN_JIT_API attn_status attn_get_stats(attn_stats *out);

/* Forgets every kernel held in memory (the disk cache stays), so that the next
 * call for a configuration reads the disk cache or compiles again. Loaded CUDA
 * modules are not unloaded: kernels may still be running on a stream. */
ATTN_JIT_API void attn_clear_memory_cache(void);

/* Waits until no kernel builds in the background. By default (unless
 * ATTN_JIT_TIERED=0) a forward call whose kernel is neither in memory nor in
 * the disk cache runs a quick kernel of the same attention (compiled in well
 * under half the time) while its own compiles on a background thread, which
 * later calls then take; a benchmark calls this before timing. Returns at
 * once otherwise. */
ATTN_JIT_API void attn_wait_for_compiles(void);

/* Split-KV (flash-decoding) for attn_forward, attn_forward_varlen and
 * attn_forward_paged (the key count taken as max_pages * page_size): when
 * a call's grid (query tiles x heads x batch) cannot fill the GPU, the keys
 * each query tile sees are divided over num_splits CTAs, which compute f32
 * partial outputs and log-sum-exps (a workspace of B * num_splits * H * Nq *
 * (D + 1) floats, allocated stream-ordered on the call's stream), merged by
 * a second kernel: LSE = log(sum_s exp(LSE_s)), O = sum_s exp(LSE_s - LSE)
 * O_s. The count is a kernel argument: changing it never recompiles.
 *   0  auto (the default): on CUDA, for decode calls (at most 16 queries
 *      per sequence; longer calls never split, so that a prefill's new
 *      length never switches kernels and compiles), chosen per call from the shape and the
 *      device's SM count (1 when the grid fills ~80% of the SMs); the host
 *      never splits (its threads take the grid's items; the result would
 *      depend on the count);
 *   1  never split;
 *   k  always k splits, on both devices (at most 128 and 65535 / B; a
 *      split whose range holds no key adds nothing).
 * The environment variable ATTN_JIT_NUM_SPLITS ("auto" or a count) sets the
 * initial value; this sets it for the process from now on. Negative:
 * ATTN_ERROR_INVALID_ARGUMENT. The backward pass never splits. */
ATTN_JIT_API attn_status attn_set_num_splits(int64_t num_splits);

/* The backward pass's form, for the process from now on (the environment
 * variable ATTN_JIT_DETERMINISTIC, 0 or 1, sets the initial value):
 *   1  (the default) deterministic: dQ is formed per query tile, which
 *      computes S and dP again (7 products per tile pair), and the same
 *      inputs give bit-identical gradients;
 *   0  dQ is added over the K/V tiles into an f32 workspace of B * H * Nq *
 *      D floats with atomic adds (5 products per tile pair, FlashAttention's
 *      default): dQ's rounding may differ from run to run (dK, dV do not).
 *      The host kernels run this form; CUDA kernels stay deterministic
 *      unless ATTN_JIT_GPU_ATOMIC_BACKWARD=1 (wgmma, sm_90a, head_dim <=
 *      128: not yet faster, see runtime/README.md).
 * Any other value: ATTN_ERROR_INVALID_ARGUMENT. */
ATTN_JIT_API attn_status attn_set_deterministic(int deterministic);

/* The compiler version hash that is part of every cache key. */
ATTN_JIT_API const char *attn_version(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_JIT_ATTN_JIT_H */
