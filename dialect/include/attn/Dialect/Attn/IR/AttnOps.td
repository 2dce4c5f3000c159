//===- AttnOps.td - attn dialect operations ---------------*- tablegen -*-===//
//
// The attn dialect describes attention at three levels:
//  * `attn.sdpa`: scaled-dot-product attention over whole memrefs;
//  * the tile program: a grid over (batch, head, Q tile), an `scf.for` over
//    K/V tiles carrying the online-softmax state, tile loads and stores, and
//    one `attn.online_attention` step per K/V tile;
//  * generic tile ops, into which `attn-decompose` expands the step: a tile
//    matmul, elementwise maps with each element's coordinates, row
//    reductions. Backward passes and variants are written in these.
// Tiles are static-shaped tensors (value semantics). A tensor encoding may
// say how a target distributes a tile (attn_nv layouts); the generic ops
// ignore it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Attention as a tiled loop nest, for FlashAttention-style kernels";
  let description = [{
    The `attn` dialect holds scaled-dot-product attention as one op
    (`attn.sdpa`), the tile program it is tiled into (a grid of query tiles,
    a loop over key/value tiles carrying the online-softmax state: running
    row max `m`, running row sum `l`, unnormalised accumulator `acc`), and the
    generic tile ops that program is decomposed into. Scores are kept in the
    base-2 domain (the softmax scale is multiplied by log2(e) once) so that
    the exponentials are `exp2`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
  let useDefaultAttributePrinterParser = 1;
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Attn_MaskKind : I32EnumAttr<"MaskKind", "which key positions a query sees", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Causal", 1, "causal">,
    I32EnumAttrCase<"CausalBottomRight", 2, "causal_bottom_right">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_MaskKindAttr : EnumAttr<Attn_Dialect, Attn_MaskKind, "mask"> {
  let assemblyFormat = "`<` $value `>`";
}

def Attn_ReduceKind : I32EnumAttr<"ReduceKind", "how a row reduction combines", [
    I32EnumAttrCase<"Max", 0, "max">,
    I32EnumAttrCase<"Add", 1, "add">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_ReduceKindAttr : EnumAttr<Attn_Dialect, Attn_ReduceKind, "reduce"> {
  let assemblyFormat = "`<` $value `>`";
}

def Attn_ConfigAttr : AttrDef<Attn_Dialect, "Config"> {
  let mnemonic = "config";
  let summary = "the resolved configuration of one attention kernel";
  let description = [{
    Every choice that shapes a kernel's code, made once (by `attn-configure`,
    from the MLIR-free tile policy that the runtime keys its caches on) and
    read by every later pass, so that no pass decides it again:

    * `mapping`: `host`, `mma.sync` or `wgmma`;
    * `chip`: the NVIDIA target (`sm_80` ... `sm_90a`), empty on the host;
    * `block_m`, `block_n`: query rows and keys per tile;
    * `warps`: warps per CTA (0 on the host);
    * `min_ctas_per_sm`: CTAs that must fit on one SM (0 on the host): it
      caps the registers ptxas may give each thread;
    * `stages`: shared-memory stages of the K/V copies (0 on the host);
    * `q_in_registers`: Q's mma operands stay in registers (mma.sync);
    * `schedule`: the wgmma K/V loop: `plain`, `pv_in_flight` (P·V left
      running into the next tile) or `softmax_overlaps_pv` (the softmax of
      tile j while P·V of tile j − 1 runs);
    * `ordered_issue`: warpgroups issue QKᵀ in turn;
    * `reverse_grid`: query tiles launch last-first (causal: longest first);
    * `pack_gqa`: a query tile packs the query heads that share a K/V head
      (the grid runs over K/V heads), so K and V are read once per group;
    * `conditional_rescale`: skip the accumulator rescale when no row max of
      a warp moved (mma.sync, register-bound kernels);
    * `tma`: K/V tiles are loaded by the bulk tensor copy engine from the
      kernel's tensor maps, completion tracked by mbarriers (wgmma forward
      over contiguous K/V; absent: false, cp.async);
    * `warp_specialize`: with `tma`, a producer warpgroup (one more, the
      last) issues the K/V copies while the `warps` consumer warps compute
      (`attn-nv-warp-specialize`; absent: false, the consumers' thread 0
      issues them);
    * `barrier_per_tile`: with `tma`, one CTA barrier per K/V tile orders a
      stage's refill after its last reads, as with cp.async (absent: false,
      each warp releases a stage on an "empty" mbarrier and the warpgroups
      run apart);
    * `grid_group_ctas`: 0 (absent): the query tile is the grid's fastest
      index, so the tiles of one (batch, head) run together and share its
      K/V in L2. g > 0: the grid runs in groups of max(1, g / query tiles)
      (batch, head) pairs, each group query tile by query tile (reversed
      with `reverse_grid`), so that a captured table every (batch, head)
      reads alike (an (N, N) bias) is read by the pairs of a group at about
      the same time, while the group's K/V stays in L2; a g past every CTA
      (document masks) puts all pairs in one group, so that the long runs
      of a query tile start together rather than head by head;
    * `narrow_compares`: signed comparisons of a map body's coordinates
      (masks: col <= row + w) run as one 32-bit compare per element against
      the bases' difference, saturated, computed once a thread (wgmma;
      absent: false, 64-bit index compares per element), where the kernel
      has registers for the differences;
    * `persistent`: with `warp_specialize`, each CTA runs several work
      tiles of the grid's (batch, head, tile) space, in rounds of the
      launch's CTAs (`attn-nv-persist`), so that the producer loads the
      next work tile's first K/V tile while the consumers finish this one
      (absent: false, one CTA a work tile);
    * `q_stages`: with `persistent`, Q's shared buffers: 2 lets the
      producer load the next work tile's Q while the consumers compute
      with this one's and store its output through it (absent: 1, Q's copy
      waits for the output's store).

    Example:
    ```mlir
    func.func @attn_fwd(...) attributes {attn.config = #attn.config<
        mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128,
        warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false,
        schedule = "pv_in_flight", ordered_issue = true, reverse_grid = true,
        pack_gqa = false, conditional_rescale = false>}
    ```
  }];
  let parameters = (ins
      StringRefParameter<"host, mma.sync or wgmma">:$mapping,
      StringRefParameter<"NVIDIA chip">:$chip,
      "int64_t":$block_m, "int64_t":$block_n, "int64_t":$warps,
      "int64_t":$min_ctas_per_sm, "int64_t":$stages, "bool":$q_in_registers,
      StringRefParameter<"wgmma K/V loop schedule">:$schedule,
      "bool":$ordered_issue, "bool":$reverse_grid, "bool":$pack_gqa,
      "bool":$conditional_rescale,
      DefaultValuedParameter<"bool", "false">:$tma,
      DefaultValuedParameter<"bool", "false">:$warp_specialize,
      DefaultValuedParameter<"bool", "false">:$barrier_per_tile,
      DefaultValuedParameter<"int64_t", "0">:$grid_group_ctas,
      DefaultValuedParameter<"bool", "false">:$narrow_compares,
      DefaultValuedParameter<"bool", "false">:$persistent,
      DefaultValuedParameter<"int64_t", "1">:$q_stages);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The attribute name under which kernels carry their configuration.
    static constexpr ::llvm::StringLiteral getAttrName() { return "attn.config"; }
    /// The configuration of the kernel function enclosing `op`, if any.
    static ConfigAttr lookup(::mlir::Operation *op);
    bool isHost() const { return getMapping() == "host"; }
    bool isWgmma() const { return getMapping() == "wgmma"; }
    /// The CTA's threads: the `warps` that compute, and with
    /// warp_specialize the producer warpgroup after them.
    int64_t getThreads() const;
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// F8E4M3FN: FP8 (e4m3) queries, keys and values, with descale factors and a
// bf16 output (attn.sdpa's `descale`).
def Attn_ElementType : AnyTypeOf<[BF16, F16, F32, F8E4M3FN]>;
def Attn_Tensor4D : MemRefRankOf<[BF16, F16, F32, F8E4M3FN], [4]>;
def Attn_LseMemRef : MemRefRankOf<[F32], [3]>;
def Attn_AnyMemRef : AnyTypeOf<[Attn_Tensor4D, Attn_LseMemRef]>;
def Attn_Tile2D : TensorRankOf<[BF16, F16, F32, F8E4M3FN], [2]>;
def Attn_RowTile : TensorRankOf<[F32], [1]>;
def Attn_AccTile : TensorRankOf<[F32], [2]>;
def Attn_AnyTile : TensorRankOf<[BF16, F16, F32, F8E4M3FN], [1, 2]>;
def Attn_MapTile : TensorRankOf<[AnyType], [1, 2]>;

//===----------------------------------------------------------------------===//
// High-level op
//===----------------------------------------------------------------------===//

// Values the score and mask modifications may read besides their
// coordinates: scalars (a window size, a softcap value) and memrefs of any
// rank read with memref.load (ALiBi slopes, document ids, a bias table).
// They are kernel arguments, so that changing one never recompiles.
// Offsets of the sequences of a packed (variable-length) batch: B + 1
// non-decreasing int32 values from 0 (FlashAttention's cu_seqlens).
def Attn_SeqOffsets : MemRefRankOf<[I32], [1]>;
// A paged K/V cache's block table: row b lists the pages of sequence b
// (vLLM's block_tables, FlashAttention's page_table), int32.
def Attn_BlockTable : MemRefRankOf<[I32], [2]>;
// Per-sequence key counts of a paged cache (FlashAttention's seqused_k).
def Attn_SeqLengths : MemRefRankOf<[I32], [1]>;
// Split-KV workspaces: the partial outputs (f32, rank 4) and their
// log-sum-exps (f32, rank 3) of every split.
def Attn_PartialOut : MemRefRankOf<[F32], [4]>;

def Attn_Capture : AnyTypeOf<[F32, I32, I64, Index,
                              MemRefOf<[F32, I32, I64, Index]>]>;

def Attn_SdpaOp : Attn_Op<"sdpa", [AttrSizedOperandSegments]> {
  let summary = "scaled-dot-product attention over whole tensors";
  let description = [{
    Computes `O = softmax(scale · Q Kᵀ + mask) V` for every (batch, head):
    Q is (B, H, Nq, D), K is (B, Hkv, Nk, D), V is (B, Hkv, Nk, Dv) and O is
    (B, H, Nq, Dv). With Hkv < H (grouped-query attention; Hkv = 1 is
    multi-query attention) query head h reads K/V head h / (H / Hkv); Hkv
    must divide H. The optional `lse` output (B, H, Nq) receives the natural
    log-sum-exp of each row of scaled scores, which the backward pass needs.
    `scale` (an f32 value, so that one kernel serves every scale; any finite
    value) defaults to 1/√D; `positive_scale` promises that it is > 0, which
    lets the softmax take the row max before scaling. `mask` is `none`,
    `causal` (query i sees keys j ≤ i, PyTorch's convention) or
    `causal_bottom_right` (j ≤ i + Nk − Nq, FlashAttention's). A row that
    sees no key gets O = 0 and LSE = −inf.

    **Variable-length batches** (FlashAttention's `flash_attn_varlen_func`):
    with `varlen(%cu_q, %cu_k, %max_q)` the batch is packed: Q and O are
    (1, H, total_q, D), K and V (1, Hkv, total_k, D), the LSE (1, H,
    total_q) (FlashAttention's (H, total_q)); sequence b holds the query
    rows [cu_q[b], cu_q[b + 1]) and the key rows [cu_k[b], cu_k[b + 1]),
    B = size(cu_q) − 1. `%max_q` (index) bounds every sequence's query
    count: the grid covers ceil(max_q / block_m) query tiles per sequence,
    so lengths are data, never part of a kernel. Every position (the masks,
    the regions' `%q_idx`, `%kv_idx`, and Nq, Nk in the bottom-right
    diagonal) is relative to its sequence's start and `%b` is the sequence;
    a capture computed from `memref.dim` of Q's or K's sequence dimension
    stands for the sequence's own length. Offsets are clamped to the packed
    rows, so wrong ones never read or write outside the tensors.

    **Paged K/V cache** (vLLM's layout, FlashAttention's `page_table`):
    with `paged(%block_table, %seqused_k)` K and V are caches of pages,
    (num_pages, Hkv, page_size, D) memrefs (vLLM's (num_pages, page_size,
    Hkv, D) through strides) with a static page size, a multiple of 16 in
    [16, 256]; `%block_table` (B, max_pages) int32 lists each sequence's
    pages and `%seqused_k` (B) int32 its key count: key j of sequence b is
    row j mod page_size of page block_table[b, j / page_size]. Queries are
    an ordinary (B, H, Nq, D) batch, or packed by `varlen(%cu_q, %max_q)`
    (no `cu_seqlens_k`: the cache holds the keys). Positions, lengths and
    `memref.dim` of K's sequence dimension are per sequence as for varlen.
    Key counts are clamped to [0, max_pages · page_size] and page numbers
    to [0, num_pages), so wrong device data never reads outside the cache.

    **Split-KV** (flash-decoding): with `split(%n, %o_part, %lse_part)` the
    keys each query tile sees are divided into `%n` (index, >= 1) ranges of
    whole K/V tiles, each computed by a program of its own into f32
    partials: `%o_part` (B·n, H, Nq, Dv) and `%lse_part` (B·n, H, Nq), row
    b·n + s for split s of batch row b (B = 1 for a packed batch). The
    partials are then merged (LSE = log Σ exp(LSE_s), O = Σ exp(LSE_s −
    LSE) O_s) into O and the LSE; a split without keys has LSE_s = −inf
    and adds nothing. The count is an operand, so a new one never
    recompiles.

    **FP8** (e4m3): Q, K and V of `f8E4M3FN` elements hold quantised values
    and `descale(%dq, %dk, %dv)` (f32, one per tensor, > 0) the factors that
    dequantise them: the attention is that of dq·Q, dk·K, dv·V, so the
    scores' scale is scale·dq·dk and O carries dv. O is bf16. The products
    read the e4m3 values; P is rounded to e4m3 for P·V (after a scaling by
    `attn.online_attention`'s kFp8ProbScale, undone with dv in the
    epilogue).

    Sizes may be dynamic except the head dims. The (B, N, H, D) layout is
    expressed through strides: Q, K, V and O need a unit innermost stride; the
    LSE may have any strides.

    Variants (FlexAttention's score_mod and mask_mod) are regions:
    `score_mod` maps each scaled score, `(%score: f32, %b, %h, %q_idx,
    %kv_idx: index, captures...) -> f32`, before the softmax; `mask_mod`
    says whether query `%q_idx` sees key `%kv_idx`, `(%b, %h, %q_idx,
    %kv_idx: index, captures...) -> i1`, in addition to `mask` and the
    bounds. Both end in `attn.yield` and may use only pure ops and
    `memref.load` of a captured memref; they read the `captures` operands
    through their trailing block arguments, never values from outside. The
    LSE is that of the modified scores. A `memref.load` of a 1-D capture at
    `%q_idx` or `%kv_idx` may carry `attn.non_decreasing` (the capture's
    values never decrease: document ids of packed sequences); an equality
    of two such loads then bounds the K/V loop by binary search.

    Example:
    ```mlir
    attn.sdpa %q, %k, %v into %o lse %lse scale %s mask <causal>
        : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
          memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
          memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
       -> memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
          memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
    ```
    A soft-capped sliding window (Gemma 2), capping at `%cap` and showing
    each query the `%w` keys up to itself:
    ```mlir
    attn.sdpa %q, %k, %v into %o mask <causal> captures(%cap, %w : f32, index)
        score_mod {
        ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: f32, %n: index):
          %x = arith.divf %s, %c : f32
          %t = math.tanh %x : f32
          %y = arith.mulf %t, %c : f32
          attn.yield %y : f32
        } mask_mod {
        ^bb0(%b: index, %h: index, %i: index, %j: index, %c: f32, %n: index):
          %d = arith.subi %i, %j : index
          %in = arith.cmpi slt, %d, %n : index
          attn.yield %in : i1
        } : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
            memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
            memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
         -> memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins
      Arg<Attn_Tensor4D, "queries", [MemRead]>:$query,
      Arg<Attn_Tensor4D, "keys", [MemRead]>:$key,
      Arg<Attn_Tensor4D, "values", [MemRead]>:$value,
      Arg<Attn_Tensor4D, "output", [MemWrite]>:$output,
      Arg<Optional<Attn_LseMemRef>, "log-sum-exp", [MemWrite]>:$lse,
      Optional<F32>:$scale,
      Optional<F32>:$descaleQ, Optional<F32>:$descaleK, Optional<F32>:$descaleV,
      Arg<Optional<Attn_SeqOffsets>, "query offsets (varlen)", [MemRead]>:$cuSeqlensQ,
      Arg<Optional<Attn_SeqOffsets>, "key offsets (varlen)", [MemRead]>:$cuSeqlensK,
      Optional<Index>:$maxSeqlenQ,
      Variadic<Attn_Capture>:$captures,
      Arg<Optional<Attn_BlockTable>, "pages of each sequence (paged K/V)", [MemRead]>:$blockTable,
      Arg<Optional<Attn_SeqLengths>, "keys of each sequence (paged K/V)", [MemRead]>:$sequsedK,
      Optional<Index>:$numSplits,
      Arg<Optional<Attn_PartialOut>, "partial outputs (split-KV)", [MemRead, MemWrite]>:$outputPartial,
      Arg<Optional<Attn_LseMemRef>, "partial log-sum-exps (split-KV)", [MemRead, MemWrite]>:$lsePartial,
      DefaultValuedAttr<Attn_MaskKindAttr, "::mlir::attn::MaskKind::None">:$mask,
      UnitAttr:$positiveScale);
  let regions = (region MaxSizedRegion<1>:$scoreMod,
                        MaxSizedRegion<1>:$maskMod);
  let assemblyFormat = [{
    $query `,` $key `,` $value `into` $output (`lse` $lse^)?
    (`scale` $scale^)?
    (`descale` `(` $descaleQ^ `,` $descaleK `,` $descaleV `)`)?
    custom<Varlen>($cuSeqlensQ, $cuSeqlensK, $maxSeqlenQ, type($cuSeqlensQ),
                   type($cuSeqlensK))
    (`paged` `(` $blockTable^ `,` $sequsedK `:` type($blockTable) `,`
      type($sequsedK) `)`)?
    (`split` `(` $numSplits^ `,` $outputPartial `,` $lsePartial `:`
      type($outputPartial) `,` type($lsePartial) `)`)?
    (`mask` $mask^)? (`positive_scale` $positiveScale^)?
    (`captures` `(` $captures^ `:` type($captures) `)`)?
    (`score_mod` $scoreMod^)? (`mask_mod` $maskMod^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->`
    type($output) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// A packed, variable-length batch (cu_seqlens operands).
    bool isVarlen() { return getCuSeqlensQ() != nullptr; }
    ::mlir::LogicalResult verifyVarlen();
    /// K and V are a paged cache (block table and key counts).
    bool isPaged() { return getBlockTable() != nullptr; }
    ::mlir::LogicalResult verifyPaged();
    /// Split-KV: the keys divided over numSplits programs, merged after.
    bool isSplit() { return getNumSplits() != nullptr; }
    /// FP8 (e4m3) inputs, dequantised by the descale factors.
    bool isFp8() { return getDescaleQ() != nullptr; }
    ::mlir::LogicalResult verifySplit();
  }];
}


def Attn_SdpaBackwardOp : Attn_Op<"sdpa_backward", [
    AttrSizedOperandSegments, AllTypesMatch<["output", "gradOutput"]>]> {
  let summary = "gradients of scaled-dot-product attention over whole tensors";
  let description = [{
    Given the inputs of an `attn.sdpa` (Q, K, V, with the same `scale`,
    `mask`, `positive_scale`, `captures` and regions), its output O and
    log-sum-exp LSE, and the gradient dO of a loss with respect to O,
    computes dQ, dK and dV. Nothing of size N×N is stored: each tile of the
    probabilities is recomputed from the LSE, `P = exp(S' − LSE)` with
    `S' = score_mod(scale · Q Kᵀ)` (masked keys: P = 0), then

        dV = Pᵀ dO,  dP = dO Vᵀ,  dS' = P ∘ (dP − rowsum(dO ∘ O)),
        dS = dS' ∘ ∂S'/∂S,  dQ = scale · dS K,  dK = scale · dSᵀ Q.

    The row terms `rowsum(dO ∘ O)` are written to `delta` (B, H, Nq, f32),
    a workspace the caller provides. With grouped-query attention dK and dV
    sum the gradients of every query head of the group. The score_mod must
    be differentiable by the compiler: `arith` add, sub, mul, div, neg,
    max/min, select, casts and `math` tanh, exp, exp2, log, log2, sqrt
    applied to the score (other ops may read the coordinates and captures
    freely); anything else on the score is a diagnostic. A row that saw no
    key (LSE = −inf) gets zero gradients.

    Without `dq_accum` the result is bit-identical from run to run
    (FlashAttention-2's deterministic backward: the query tiles recompute S
    and dP to form dQ, 7 products per tile pair). With `dq_accum`, an f32
    workspace shaped as Q that the caller zeroes, the K/V tiles also form
    dS K and add it there with atomic adds, and dQ is `dq_accum` scaled and
    rounded (5 products per tile pair, FlashAttention-2's default): the
    order of the additions, and so dQ's rounding, may differ between runs.

    Example:
    ```mlir
    attn.sdpa_backward %q, %k, %v, %o, %do, %lse into %dq, %dk, %dv
        delta %delta scale %s mask <causal>
        : !bhnd, !bhnd, !bhnd, !bhnd, !lse -> !bhnd, !bhnd, !bhnd, !lse
    attn.sdpa_backward %q, %k, %v, %o, %do, %lse into %dq, %dk, %dv
        delta %delta dq_accum %acc : memref<?x?x?x64xf32> scale %s
        : !bhnd, !bhnd, !bhnd, !bhnd, !lse -> !bhnd, !bhnd, !bhnd, !lse
    ```
  }];
  let arguments = (ins
      Arg<Attn_Tensor4D, "queries", [MemRead]>:$query,
      Arg<Attn_Tensor4D, "keys", [MemRead]>:$key,
      Arg<Attn_Tensor4D, "values", [MemRead]>:$value,
      Arg<Attn_Tensor4D, "the forward's output", [MemRead]>:$output,
      Arg<Attn_Tensor4D, "gradient of the output", [MemRead]>:$gradOutput,
      Arg<Attn_LseMemRef, "the forward's log-sum-exp", [MemRead]>:$lse,
      Arg<Attn_Tensor4D, "gradient of the queries", [MemWrite]>:$gradQuery,
      Arg<Attn_Tensor4D, "gradient of the keys", [MemWrite]>:$gradKey,
      Arg<Attn_Tensor4D, "gradient of the values", [MemWrite]>:$gradValue,
      Arg<Attn_LseMemRef, "row terms (workspace)", [MemRead, MemWrite]>:$delta,
      Arg<Optional<Attn_Tensor4D>, "dQ's f32 accumulator (zeroed workspace)",
          [MemRead, MemWrite]>:$gradQueryAccum,
      Optional<F32>:$scale,
      Variadic<Attn_Capture>:$captures,
      DefaultValuedAttr<Attn_MaskKindAttr, "::mlir::attn::MaskKind::None">:$mask,
      UnitAttr:$positiveScale);
  let regions = (region MaxSizedRegion<1>:$scoreMod,
                        MaxSizedRegion<1>:$maskMod);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $gradOutput `,` $lse
    `into` $gradQuery `,` $gradKey `,` $gradValue `delta` $delta
    (`dq_accum` $gradQueryAccum^ `:` type($gradQueryAccum))?
    (`scale` $scale^)? (`mask` $mask^)? (`positive_scale` $positiveScale^)?
    (`captures` `(` $captures^ `:` type($captures) `)`)?
    (`score_mod` $scoreMod^)? (`mask_mod` $maskMod^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `,`
    type($output) `,` type($lse) `->` type($gradQuery) `,` type($gradKey) `,`
    type($gradValue) `,` type($delta)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// The tile program
//===----------------------------------------------------------------------===//

def Attn_TileGridOp : Attn_Op<"tile_grid", [
    SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "independent programs over (batch, head, query tile)";
  let description = [{
    Runs its body once for every (batch, head, query tile) triple in
    [0, batch) × [0, heads) × [0, query_tiles). The instances are independent:
    the NVIDIA mapping gives each one a CTA, the CPU mapping a loop iteration.
    The body's three index arguments are the coordinates.

    Example:
    ```mlir
    attn.tile_grid (%b, %h, %t) in (%B, %H, %T) {
      %row = arith.muli %t, %c64 : index
      %q = attn.load_tile %Q[%b, %h, %row] bounds %nq : memref<?x?x?x64xf16> -> tensor<64x64xf16>
    }
    ```
  }];
  let arguments = (ins Index:$batch, Index:$heads, Index:$queryTiles);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$batch, "::mlir::Value":$heads,
                   "::mlir::Value":$queryTiles)>
  ];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::Value getBatchIndex() { return getBodyBlock().getArgument(0); }
    ::mlir::Value getHeadIndex() { return getBodyBlock().getArgument(1); }
    ::mlir::Value getTileIndex() { return getBodyBlock().getArgument(2); }
  }];
}

def Attn_LoadTileOp : Attn_Op<"load_tile", [AttrSizedOperandSegments]> {
  let summary = "loads rows [row, row + R) of one (batch, head) as a tile";
  let description = [{
    Reads the R×D tile `source[batch, head, row : row + R, :]` of a
    (B, H, N, D) memref. Rows at or past `bound` (at most N) read as zeros,
    so a tile may overhang the end of the sequence.

    With `rows_per_head` the tile packs several heads: its rows are the
    rows p in [row, row + R) of heads `head`, `head` + 1, ... laid end to
    end, row p being row p mod rows_per_head of head `head` + p /
    rows_per_head; `bound` counts packed rows. Grouped-query decoding packs
    the query heads of one K/V head so that K and V are read once per group.
    With `start` as well (one sequence of a variable-length batch, packed)
    row p is row `start` + p mod rows_per_head of its head.

    With `pages(%block_table)` the source is a paged cache (num_pages, H,
    page_size, D) and `batch` a row of the (B, max_pages) int32 block
    table: row j (< bound) is row j mod page_size of page
    block_table[batch, j / page_size], a gather of rows. Page numbers are
    clamped to [0, num_pages) and block-table columns to [0, max_pages).

    From a (B, H, N) memref of row terms (a log-sum-exp) it reads
    `source[batch, head, row : row + R]` as a row tile of R elements, or as
    a 1×R tile (the backward's dK/dV loop, whose score tiles hold queries
    along the columns).

    Example:
    ```mlir
    %k = attn.load_tile %K[%b, %h, %kv] bounds %nk
        : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xbf16>
    %q = attn.load_tile %Q[%b, %h0, %row] rows_per_head %nq bounds %rows
        : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xbf16>
    ```
  }];
  let arguments = (ins Arg<Attn_AnyMemRef, "source", [MemRead]>:$source,
                       Index:$batch, Index:$head, Index:$row, Index:$bound,
                       Optional<Index>:$rowsPerHead,
                       Arg<Optional<Attn_BlockTable>, "block table", [MemRead]>:$pages,
                       Optional<Index>:$start);
  let results = (outs Attn_AnyTile:$result);
  let assemblyFormat = [{
    $source `[` $batch `,` $head `,` $row `]`
    (`rows_per_head` $rowsPerHead^)? (`start` $start^)?
    (`pages` `(` $pages^ `:` type($pages) `)`)? `bounds` $bound attr-dict
    `:` type($source) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$source,
                   "::mlir::Value":$batch, "::mlir::Value":$head,
                   "::mlir::Value":$row, "::mlir::Value":$bound,
                   "::mlir::Value":$rowsPerHead), [{
      build($_builder, $_state, result, source, batch, head, row, bound,
            rowsPerHead, ::mlir::Value(), ::mlir::Value());
    }]>,
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$source,
                   "::mlir::Value":$batch, "::mlir::Value":$head,
                   "::mlir::Value":$row, "::mlir::Value":$bound,
                   "::mlir::Value":$rowsPerHead, "::mlir::Value":$pages), [{
      build($_builder, $_state, result, source, batch, head, row, bound,
            rowsPerHead, pages, ::mlir::Value());
    }]>
  ];
  let hasVerifier = 1;
}

def Attn_StoreTileOp : Attn_Op<"store_tile", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "stores the rows of a tile that lie inside the destination";
  let description = [{
    Writes a R×D output tile into `dest[batch, head, row : row + R, :]` of a
    (B, H, N, D) memref, or a length-R row tile (the log-sum-exp) into
    `dest[batch, head, row : row + R]` of a (B, H, N) memref. Rows at or past
    `bound` (at most N) are dropped. `rows_per_head` and `start` pack heads
    as for `attn.load_tile`.

    With `accumulate` each element of an R×D f32 tile is added to its
    destination element by an atomic add, so that items of a grid may add
    into the same rows at once (the backward's dQ over K/V tiles); the
    order of the additions is then not fixed. It takes no `rows_per_head`
    or `start`.

    Example:
    ```mlir
    attn.store_tile %o, %O[%b, %h, %row] bounds %nq : tensor<64x64xbf16>, memref<?x?x?x64xbf16>
    attn.store_tile %lse, %LSE[%b, %h, %row] bounds %nq : tensor<64xf32>, memref<?x?x?xf32>
    attn.store_tile %dq, %DQ[%b, %h, %row] accumulate bounds %nq : tensor<64x64xf32>, memref<?x?x?x64xf32>
    ```
  }];
  // Effects: getEffects (a write, and with `accumulate` a read).
  let arguments = (ins Attn_AnyTile:$tile, Attn_AnyMemRef:$dest,
                       Index:$batch, Index:$head, Index:$row, Index:$bound,
                       Optional<Index>:$rowsPerHead,
                       Optional<Index>:$start,
                       UnitAttr:$accumulate);
  let assemblyFormat = [{
    $tile `,` $dest `[` $batch `,` $head `,` $row `]`
    (`rows_per_head` $rowsPerHead^)? (`start` $start^)?
    (`accumulate` $accumulate^)? `bounds` $bound
    attr-dict `:` type($tile) `,` type($dest)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$tile, "::mlir::Value":$dest,
                   "::mlir::Value":$batch, "::mlir::Value":$head,
                   "::mlir::Value":$row, "::mlir::Value":$bound,
                   "::mlir::Value":$rowsPerHead), [{
      build($_builder, $_state, tile, dest, batch, head, row, bound,
            rowsPerHead, ::mlir::Value());
    }]>
  ];
  let hasVerifier = 1;
}

def Attn_OnlineAttentionOp : Attn_Op<"online_attention", [
    Pure, AttrSizedOperandSegments,
    AllTypesMatch<["max", "sum", "newMax", "newSum"]>,
    AllTypesMatch<["acc", "newAcc"]>]> {
  let summary = "one online-attention step of a query tile against a K/V tile";
  let description = [{
    Folds one key/value tile into the online-softmax state of a query tile:
    scores `S = scale · Q Kᵀ` (`scale` is the natural softmax scale; masked
    with `mask` and the bounds `num_queries`, `num_keys`, where `row`/`col`
    are the first query/key of the tiles), then the merge of (m, l, acc) with
    the tile's statistics:

        m' = max(m, rowmax(S'))            with S' = S · log2(e)
        l' = 2^(m − m') · l + rowsum(2^(S' − m'))
        acc' = 2^(m − m') · acc + 2^(S' − m') · V

    With e4m3 tiles (FP8) the probabilities are multiplied by kFp8ProbScale
    (2^8) before they are rounded to e4m3 for the product with V, so that
    acc holds kFp8ProbScale times the sum above: e4m3's normal range starts
    at 2^-6, and the scaling keeps 3 significant bits down to 2^-14 of the
    row's max instead of flushing small probabilities (a long row's mass)
    to subnormals; the largest, 2^8, stays below e4m3's 448.

    `positive_scale` promises scale > 0. With `rows_per_head` the query tile
    packs heads (see `attn.load_tile`): the query of packed row p is
    p mod rows_per_head, its head `head + p / rows_per_head`.
    `score_mod`, `mask_mod` and `captures` are those of `attn.sdpa`; with a
    region, `batch` and `head` (the tile's first query head) say which
    (batch, head) the tile belongs to. `attn-decompose` expands the op into
    generic tile ops (`attn.matmul`, `attn.map`, `attn.reduce`), the regions
    inlined into the maps over the scores.

    Example:
    ```mlir
    %m1, %l1, %acc1 = attn.online_attention %q, %k, %v, %m, %l, %acc
        at [%row, %kv] bounds [%nq, %nk] scale %s mask <causal>
        : tensor<64x64xf16>, tensor<64x64xf16>, tensor<64x64xf16>,
          tensor<64xf32>, tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Attn_Tile2D:$query, Attn_Tile2D:$key, Attn_Tile2D:$value,
                       Attn_RowTile:$max, Attn_RowTile:$sum, Attn_AccTile:$acc,
                       Index:$row, Index:$col, Index:$numQueries, Index:$numKeys,
                       F32:$scale, Optional<Index>:$rowsPerHead,
                       Optional<Index>:$batch, Optional<Index>:$head,
                       Variadic<Attn_Capture>:$captures,
                       DefaultValuedAttr<Attn_MaskKindAttr, "::mlir::attn::MaskKind::None">:$mask,
                       UnitAttr:$positiveScale);
  let results = (outs Attn_RowTile:$newMax, Attn_RowTile:$newSum,
                      Attn_AccTile:$newAcc);
  let regions = (region MaxSizedRegion<1>:$scoreMod,
                        MaxSizedRegion<1>:$maskMod);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $max `,` $sum `,` $acc
    `at` ` ` `[` $row `,` $col `]` (`rows_per_head` $rowsPerHead^)?
    `bounds` ` ` `[` $numQueries `,` $numKeys `]`
    `scale` $scale (`mask` $mask^)? (`positive_scale` $positiveScale^)?
    (`batch` $batch^)? (`head` $head^)?
    (`captures` `(` $captures^ `:` type($captures) `)`)?
    (`score_mod` $scoreMod^)? (`mask_mod` $maskMod^)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `,` type($max) `,` type($acc)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The factor of the probabilities in P·V with e4m3 tiles (FP8).
    static constexpr float kFp8ProbScale = 256.0f;
  }];
}

def Attn_FinalizeOp : Attn_Op<"finalize", [
    Pure, AllTypesMatch<["max", "sum", "lse"]>]> {
  let summary = "divides by the row sum and forms the log-sum-exp";
  let description = [{
    The epilogue of one query tile: `O = acc / l` rounded to the output
    element type, and `LSE = ln 2 · m + ln l` (natural log; m is in base-2
    units). A row with l = 0 (every key masked) gives O = 0 and LSE = −inf.
    With `scale %s` (FP8: the value descale over the probabilities' scale)
    `O = s · acc / l`.
    `attn-decompose` expands it into `attn.map`s.

    Example:
    ```mlir
    %o, %lse = attn.finalize %acc, %m, %l : tensor<64x64xf32>, tensor<64xf32> -> tensor<64x64xbf16>
    ```
  }];
  let arguments = (ins Attn_AccTile:$acc, Attn_RowTile:$max, Attn_RowTile:$sum,
                       Optional<F32>:$outputScale);
  let results = (outs Attn_Tile2D:$output, Attn_RowTile:$lse);
  let assemblyFormat = [{
    $acc `,` $max `,` $sum (`scale` $outputScale^)? attr-dict
    `:` type($acc) `,` type($max)
    `->` type($output)
  }];
  let hasVerifier = 1;
}


def Attn_ScoreGradOp : Attn_Op<"score_grad", [Pure, AttrSizedOperandSegments,
    AllTypesMatch<["lse", "delta"]>, AllTypesMatch<["probs", "gradScores"]>]> {
  let summary = "recomputes a tile of probabilities and their score gradients";
  let description = [{
    One step of the backward pass (see `attn.sdpa_backward`) for a query
    tile Q (BM×D) with its gradient dO (BM×Dv), row terms `lse` and `delta`,
    against a key tile K (BN×D) and V (BN×Dv): the probabilities
    `P = exp(S' − lse)` with `S' = score_mod(scale · Q Kᵀ)`, zero where a
    key is hidden (the mask_mod, keys at or past `num_keys`), and the
    gradient with respect to the scaled scores `scale · Q Kᵀ`,
    `dS = P ∘ (dO Vᵀ − delta) ∘ ∂S'/∂S`, both rounded to the element type
    of Q. `row` and `col` are the first query and key of the tiles.

    Queries-major (the dQ loop), the results are BM×BN and `lse`, `delta`
    row tiles of BM elements. With `keys_major` (the dK/dV loop, which
    accumulates Pᵀ dO and dSᵀ Q) the results are transposed, BN×BM, rows
    being keys, and `lse`, `delta` are 1×BM tiles broadcast along the rows;
    queries at or past `num_queries` are hidden too. `attn-decompose`
    expands it into generic tile ops, the mask and score_mod as in the
    forward step, the score_mod's derivative formed from its region.

    Example:
    ```mlir
    %p, %ds = attn.score_grad %q, %k, %v, %do, %lse, %delta
        at [%row, %kv] bounds [%nq, %nk] scale %s
        : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>,
          tensor<64x64xbf16>, tensor<64xf32> -> tensor<64x64xbf16>
    ```
  }];
  let arguments = (ins Attn_Tile2D:$query, Attn_Tile2D:$key, Attn_Tile2D:$value,
                       Attn_Tile2D:$gradOutput, Attn_AnyTile:$lse,
                       Attn_AnyTile:$delta,
                       Index:$row, Index:$col, Index:$numQueries, Index:$numKeys,
                       F32:$scale, Optional<Index>:$batch, Optional<Index>:$head,
                       Variadic<Attn_Capture>:$captures,
                       UnitAttr:$positiveScale, UnitAttr:$keysMajor);
  let results = (outs Attn_Tile2D:$probs, Attn_Tile2D:$gradScores);
  let regions = (region MaxSizedRegion<1>:$scoreMod,
                        MaxSizedRegion<1>:$maskMod);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $gradOutput `,` $lse `,` $delta
    `at` ` ` `[` $row `,` $col `]`
    `bounds` ` ` `[` $numQueries `,` $numKeys `]`
    `scale` $scale (`positive_scale` $positiveScale^)? (`keys_major` $keysMajor^)?
    (`batch` $batch^)? (`head` $head^)?
    (`captures` `(` $captures^ `:` type($captures) `)`)?
    (`score_mod` $scoreMod^)? (`mask_mod` $maskMod^)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `,` type($gradOutput) `,`
    type($lse) `->` type($probs)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Generic tile ops
//===----------------------------------------------------------------------===//

def Attn_MatmulOp : Attn_Op<"matmul", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "tile matrix product with f32 accumulation";
  let description = [{
    `result = acc + op(lhs) · op(rhs)` where `op` transposes its operand when
    `transpose_lhs` / `transpose_rhs` is set: with both unset, lhs is M×K and
    rhs K×N; the accumulator and result are M×N f32. The operands have one
    element type (bf16, f16 or f32); products are accumulated in f32.
    Attention's QKᵀ is `attn.matmul %q, %k, %zero transpose_rhs`, its P·V
    `attn.matmul %p, %v, %acc`; the backward pass needs Pᵀ·dO
    (`transpose_lhs`).

    Example:
    ```mlir
    %s = attn.matmul %q, %k, %zero transpose_rhs
        : tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Attn_Tile2D:$lhs, Attn_Tile2D:$rhs, Attn_AccTile:$acc,
                       UnitAttr:$transposeLhs, UnitAttr:$transposeRhs);
  let results = (outs Attn_AccTile:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   "::mlir::Value":$acc, "bool":$transposeLhs,
                   "bool":$transposeRhs), [{
      build($_builder, $_state, acc.getType(), lhs, rhs, acc,
            transposeLhs ? $_builder.getUnitAttr() : ::mlir::UnitAttr(),
            transposeRhs ? $_builder.getUnitAttr() : ::mlir::UnitAttr());
    }]>
  ];
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc (`transpose_lhs` $transposeLhs^)?
    (`transpose_rhs` $transposeRhs^)? attr-dict
    `:` type($lhs) `,` type($rhs) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Attn_MapOp : Attn_Op<"map", [Pure, AttrSizedOperandSegments, SingleBlock]> {
  let summary = "elementwise tile computation that sees each element's coordinates";
  let description = [{
    Computes each element of the result from the same element of the
    `inputs` by the scalar ops of its body. A 2-D map (R×C result) takes R×C
    tiles, length-R row tiles, which are broadcast along the columns, and
    1×C column tiles, broadcast along the rows; a 1-D map (length R) takes
    length-R tiles. The body's arguments are the
    element's coordinates (row, and for 2-D maps column; `index`), offset by
    `at [row, col]` when given, then one scalar per input; it yields the
    result element. The mask, the scale of the scores and every step of the
    softmax are maps.

    Example (causal mask on a score tile whose first element is query %row,
    key %kv):
    ```mlir
    %t = attn.map(%s : tensor<64x64xf32>) at [%row, %kv] -> tensor<64x64xf32> {
    ^bb0(%i: index, %j: index, %x: f32):
      %hidden = arith.cmpi ugt, %j, %i : index
      %y = arith.select %hidden, %neginf, %x : f32
      attn.yield %y : f32
    }
    ```
  }];
  let arguments = (ins Variadic<Attn_MapTile>:$inputs,
                       Variadic<Index>:$offsets);
  let results = (outs Attn_MapTile:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`(` $inputs^ `:` type($inputs) `)`)? (`at` ` ` `[` $offsets^ `]`)?
    attr-dict `->` type($result) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  // Moves per-element work that does not depend on the element out of the
  // body (MapCanonicalize.cpp).
  let hasCanonicalizer = 1;
  let builders = [
    // `body` gets the coordinates and the input elements and returns the
    // element to yield.
    OpBuilder<(ins "::mlir::Type":$resultType, "::mlir::ValueRange":$inputs,
      "::mlir::ValueRange":$offsets,
      "::llvm::function_ref<::mlir::Value(::mlir::OpBuilder &, ::mlir::Location, ::mlir::ValueRange, ::mlir::ValueRange)>":$body)>
  ];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    int64_t getRank() { return getResult().getType().getRank(); }
    /// The body argument of input `i`.
    ::mlir::BlockArgument getInputArg(unsigned i) {
      return getBodyBlock().getArgument(getRank() + i);
    }
    /// The value yielded by the body.
    ::mlir::Value getYielded();
  }];
}

def Attn_ReduceOp : Attn_Op<"reduce", [Pure, AllTypesMatch<["init", "result"]>]> {
  let summary = "row reduction of a tile, combined with an initial row tile";
  let description = [{
    `result[i] = init[i] ⊕ tile[i, 0] ⊕ ... ⊕ tile[i, C − 1]` with ⊕ the
    reduction `kind`: `max` (IEEE maxNum: a NaN loses to a number) or `add`.
    The online softmax's running max and row sums are reductions.

    Example:
    ```mlir
    %m1 = attn.reduce <max> %s, %m : tensor<64x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Attn_ReduceKindAttr:$kind, Attn_AccTile:$tile,
                       Attn_RowTile:$init);
  let results = (outs Attn_RowTile:$result);
  let builders = [
    OpBuilder<(ins "::mlir::attn::ReduceKind":$kind, "::mlir::Value":$tile,
                   "::mlir::Value":$init), [{
      build($_builder, $_state, init.getType(),
            ReduceKindAttr::get($_builder.getContext(), kind), tile, init);
    }]>
  ];
  let assemblyFormat = [{
    $kind $tile `,` $init attr-dict `:` type($tile) `,` type($init)
  }];
  let hasVerifier = 1;
}

def Attn_YieldOp : Attn_Op<"yield", [
    Pure, Terminator, ReturnLike,
    ParentOneOf<["MapOp", "SdpaOp", "SdpaBackwardOp", "OnlineAttentionOp",
                "ScoreGradOp"]>]> {
  let summary = "yields the element computed by an attn.map body or a mod";
  let description = [{
    Terminates the body of `attn.map` with one scalar of the result's element
    type, and a `score_mod` (f32) or `mask_mod` (i1) region.

    Example:
    ```mlir
    attn.yield %y : f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let hasVerifier = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
