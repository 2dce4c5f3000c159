//===- AttnOps.td - attn dialect operations ---------------*- tablegen -*-===//
//
// The attn dialect describes attention at two levels:
//  * `attn.sdpa`: scaled-dot-product attention over whole memrefs;
//  * tile-level ops: a grid over (batch, head, Q tile), a loop over K/V tiles
//    carrying the online-softmax state (m, l, acc), and the per-tile steps.
// Tiles are static-shaped tensors (value semantics); the CPU path bufferizes
// them, the NVIDIA path distributes them over the registers of a CTA.
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
    (`attn.sdpa`) and the tile-level ops it is lowered into: a grid over
    (batch, head, query tile), a loop over key/value tiles that carries the
    online-softmax state (running max `m`, running sum `l`, unnormalised
    accumulator `acc`), and the steps of its body. Scores are kept in the
    base-2 domain (the softmax scale is multiplied by log2(e) once) so that the
    exponentials are `exp2`.
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

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Attn_ElementType : AnyTypeOf<[BF16, F16, F32]>;
def Attn_Tensor4D : MemRefRankOf<[BF16, F16, F32], [4]>;
def Attn_LseMemRef : MemRefRankOf<[F32], [3]>;
def Attn_AnyMemRef : AnyTypeOf<[Attn_Tensor4D, Attn_LseMemRef]>;
def Attn_Tile2D : TensorRankOf<[BF16, F16, F32], [2]>;
def Attn_RowTile : TensorRankOf<[F32], [1]>;
def Attn_AccTile : TensorRankOf<[F32], [2]>;
def Attn_AnyTile : TensorRankOf<[BF16, F16, F32], [1, 2]>;

//===----------------------------------------------------------------------===//
// High-level op
//===----------------------------------------------------------------------===//

def Attn_SdpaOp : Attn_Op<"sdpa", [AttrSizedOperandSegments]> {
  let summary = "scaled-dot-product attention over whole tensors";
  let description = [{
    Computes `O = softmax(scale · Q Kᵀ + mask) V` for every (batch, head):
    Q is (B, H, Nq, D), K is (B, H, Nk, D), V is (B, H, Nk, Dv) and O is
    (B, H, Nq, Dv). The optional `lse` output (B, H, Nq) receives the natural
    log-sum-exp of each row of scaled scores, which the backward pass needs.
    `scale` (an f32 value, so that one kernel serves every scale) defaults to
    1/√D. `mask` is `none`, `causal` (query i sees keys
    j ≤ i, PyTorch's convention) or `causal_bottom_right` (j ≤ i + Nk − Nq,
    FlashAttention's). A row that sees no key gets O = 0 and LSE = −inf.

    Sizes may be dynamic except the head dims. The (B, N, H, D) layout is
    expressed through strides: Q, K, V and O need a unit innermost stride; the
    LSE may have any strides.

    Example:
    ```mlir
    attn.sdpa %q, %k, %v into %o lse %lse scale %s mask <causal>
        : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
          memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
          memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
       -> memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
          memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
    ```
  }];
  let arguments = (ins
      Arg<Attn_Tensor4D, "queries", [MemRead]>:$query,
      Arg<Attn_Tensor4D, "keys", [MemRead]>:$key,
      Arg<Attn_Tensor4D, "values", [MemRead]>:$value,
      Arg<Attn_Tensor4D, "output", [MemWrite]>:$output,
      Arg<Optional<Attn_LseMemRef>, "log-sum-exp", [MemWrite]>:$lse,
      Optional<F32>:$scale,
      DefaultValuedAttr<Attn_MaskKindAttr, "::mlir::attn::MaskKind::None">:$mask);
  let assemblyFormat = [{
    $query `,` $key `,` $value `into` $output (`lse` $lse^)?
    (`scale` $scale^)? (`mask` $mask^)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `->` type($output)
    (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tile-level structure
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
      %q = attn.load_tile %Q[%b, %h, %row] : memref<?x?x?x64xf16> -> tensor<64x64xf16>
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

def Attn_KvLoopOp : Attn_Op<"kv_loop", [
    SingleBlock, RecursiveMemoryEffects,
    AllTypesMatch<["initMax", "initSum", "max", "sum"]>,
    AllTypesMatch<["initAcc", "acc"]>]> {
  let summary = "loop over key/value tiles carrying the online-softmax state";
  let description = [{
    Iterates `%kv` from `lower` to `upper` (exclusive) by `step`, where `%kv` is
    the first key of the current tile. It carries the online-softmax state of
    one query tile: the running row max `m` (base-2 units), the running row sum
    `l` and the unnormalised output accumulator `acc`, all f32. The body ends in
    `attn.yield` with the updated state; the results are the final state.
    Bounds are chosen by the tiling pass; with a causal mask the upper bound
    stops at the diagonal so that tiles wholly above it are never visited.

    Example:
    ```mlir
    %m, %l, %acc = attn.kv_loop %kv = %c0 to %hi step %c64
        iter_args(%m0, %l0, %acc0) : tensor<64xf32>, tensor<64x64xf32> {
      ...
      attn.yield %m1, %l1, %acc1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
    }
    ```
  }];
  let arguments = (ins Index:$lower, Index:$upper, Index:$step,
                       Attn_RowTile:$initMax, Attn_RowTile:$initSum,
                       Attn_AccTile:$initAcc);
  let results = (outs Attn_RowTile:$max, Attn_RowTile:$sum, Attn_AccTile:$acc);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lower, "::mlir::Value":$upper,
                   "::mlir::Value":$step, "::mlir::Value":$initMax,
                   "::mlir::Value":$initSum, "::mlir::Value":$initAcc)>
  ];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::Value getInductionVar() { return getBodyBlock().getArgument(0); }
    ::mlir::Value getMaxArg() { return getBodyBlock().getArgument(1); }
    ::mlir::Value getSumArg() { return getBodyBlock().getArgument(2); }
    ::mlir::Value getAccArg() { return getBodyBlock().getArgument(3); }
  }];
}

def Attn_YieldOp : Attn_Op<"yield", [
    Pure, Terminator, ReturnLike, HasParent<"KvLoopOp">]> {
  let summary = "yields the updated online-softmax state of a kv_loop";
  let description = [{
    Terminates the body of `attn.kv_loop` with the state (m, l, acc) for the
    next iteration; its operand types match the loop's results.

    Example:
    ```mlir
    attn.yield %m1, %l1, %acc1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tile data movement
//===----------------------------------------------------------------------===//

def Attn_LoadTileOp : Attn_Op<"load_tile"> {
  let summary = "loads rows [row, row + R) of one (batch, head) as a tile";
  let description = [{
    Reads the R×D tile `source[batch, head, row : row + R, :]` of a
    (B, H, N, D) memref. Rows at or past N are filled with zeros, so a tile
    may overhang the end of the sequence.

    Example:
    ```mlir
    %k = attn.load_tile %K[%b, %h, %kv]
        : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xbf16>
    ```
  }];
  let arguments = (ins Arg<Attn_Tensor4D, "source", [MemRead]>:$source,
                       Index:$batch, Index:$head, Index:$row);
  let results = (outs Attn_Tile2D:$result);
  let assemblyFormat = [{
    $source `[` $batch `,` $head `,` $row `]` attr-dict
    `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attn_StoreTileOp : Attn_Op<"store_tile"> {
  let summary = "stores the rows of a tile that lie inside the destination";
  let description = [{
    Writes a R×D output tile into `dest[batch, head, row : row + R, :]` of a
    (B, H, N, D) memref, or a length-R row tile (the log-sum-exp) into
    `dest[batch, head, row : row + R]` of a (B, H, N) memref. Rows at or past
    N are dropped.

    Example:
    ```mlir
    attn.store_tile %o, %O[%b, %h, %row] : tensor<64x64xbf16>, memref<?x?x?x64xbf16>
    attn.store_tile %lse, %LSE[%b, %h, %row] : tensor<64xf32>, memref<?x?x?xf32>
    ```
  }];
  let arguments = (ins Attn_AnyTile:$tile,
                       Arg<Attn_AnyMemRef, "destination", [MemWrite]>:$dest,
                       Index:$batch, Index:$head, Index:$row);
  let assemblyFormat = [{
    $tile `,` $dest `[` $batch `,` $head `,` $row `]` attr-dict
    `:` type($tile) `,` type($dest)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tile compute
//===----------------------------------------------------------------------===//

def Attn_OnlineAttentionOp : Attn_Op<"online_attention", [
    Pure, AllTypesMatch<["max", "sum", "newMax", "newSum"]>,
    AllTypesMatch<["acc", "newAcc"]>]> {
  let summary = "one online-attention step of a query tile against a K/V tile";
  let description = [{
    Folds one key/value tile into the online-softmax state of a query tile:
    scores `S = scale · Q Kᵀ` (`scale` is the natural softmax scale; masked with `mask` and the bounds
    `num_queries`, `num_keys`, where `row`/`col` are the first query/key of the
    tiles), then the merge of (m, l, acc) with the tile's statistics:

        m' = max(m, rowmax(S'))            with S' = S · log2(e)
        l' = 2^(m − m') · l + rowsum(2^(S' − m'))
        acc' = 2^(m − m') · acc + 2^(S' − m') · V

    `attn-expand-online-softmax` expands it into `attn.qk`, `attn.mask`,
    `attn.online_softmax` and `attn.pv`.

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
                       F32:$scale,
                       DefaultValuedAttr<Attn_MaskKindAttr, "::mlir::attn::MaskKind::None">:$mask);
  let results = (outs Attn_RowTile:$newMax, Attn_RowTile:$newSum,
                      Attn_AccTile:$newAcc);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $max `,` $sum `,` $acc
    `at` ` ` `[` $row `,` $col `]` `bounds` ` ` `[` $numQueries `,` $numKeys `]`
    `scale` $scale (`mask` $mask^)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `,` type($max) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Attn_QKOp : Attn_Op<"qk", [Pure]> {
  let summary = "scaled score tile S = scale · Q Kᵀ, accumulated in f32";
  let description = [{
    Multiplies a BM×D query tile by the transpose of a BN×D key tile with f32
    accumulation and multiplies the product by the f32 value `scale`. The
    expansion pass passes the softmax scale times log2(e), so the scores come out in base-2
    units ready for `exp2`.

    Example:
    ```mlir
    %s = attn.qk %q, %k scale %c : tensor<64x64xbf16>, tensor<32x64xbf16> -> tensor<64x32xf32>
    ```
  }];
  let arguments = (ins Attn_Tile2D:$query, Attn_Tile2D:$key, F32:$scale);
  let results = (outs Attn_AccTile:$scores);
  let assemblyFormat = [{
    $query `,` $key `scale` $scale attr-dict `:` type($query) `,` type($key)
    `->` type($scores)
  }];
  let hasVerifier = 1;
}

def Attn_MaskOp : Attn_Op<"mask", [Pure, AllTypesMatch<["scores", "result"]>]> {
  let summary = "sets masked and out-of-bounds scores to -inf";
  let description = [{
    `row` and `col` are the first query and key of the BM×BN score tile.
    Element (i, j) becomes −inf when key `col + j` is at or past `num_keys`,
    or when `mask` hides it from query `row + i` (`causal`: key > query;
    `causal_bottom_right`: key > query + num_keys − num_queries). With mask
    `none` only the key bound applies.

    Example:
    ```mlir
    %sm = attn.mask %s at [%row, %kv] bounds [%nq, %nk] mask <causal> : tensor<64x32xf32>
    ```
  }];
  let arguments = (ins Attn_AccTile:$scores, Index:$row, Index:$col,
                       Index:$numQueries, Index:$numKeys,
                       DefaultValuedAttr<Attn_MaskKindAttr, "::mlir::attn::MaskKind::None">:$mask);
  let results = (outs Attn_AccTile:$result);
  let assemblyFormat = [{
    $scores `at` ` ` `[` $row `,` $col `]` `bounds` ` ` `[` $numQueries `,` $numKeys `]`
    (`mask` $mask^)? attr-dict `:` type($scores)
  }];
}

def Attn_OnlineSoftmaxOp : Attn_Op<"online_softmax", [
    Pure, AllTypesMatch<["max", "sum", "newMax", "newSum", "alpha"]>]> {
  let summary = "online-softmax update of the running max and sum";
  let description = [{
    Given base-2 scores S (BM×BN) and the running max `m` and sum `l`:

        m'    = max(m, rowmax(S))
        p     = 2^(S − m')             (0 where S = −inf)
        l'    = alpha · l + rowsum(p)
        alpha = 2^(m − m')

    While a row has seen only −inf scores, m' stays −inf; the exponent then
    uses 0 instead of m' so that no NaN (−inf − −inf) appears. `p` is rounded
    to its result element type, the input type of the P·V product.

    Example:
    ```mlir
    %p, %m1, %l1, %alpha = attn.online_softmax %s, %m, %l
        : tensor<64x32xf32>, tensor<64xf32> -> tensor<64x32xbf16>
    ```
  }];
  let arguments = (ins Attn_AccTile:$scores, Attn_RowTile:$max, Attn_RowTile:$sum);
  let results = (outs Attn_Tile2D:$probs, Attn_RowTile:$newMax,
                      Attn_RowTile:$newSum, Attn_RowTile:$alpha);
  let assemblyFormat = [{
    $scores `,` $max `,` $sum attr-dict `:` type($scores) `,` type($max)
    `->` type($probs)
  }];
  let hasVerifier = 1;
}

def Attn_PVOp : Attn_Op<"pv", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "rescales the accumulator and adds P·V";
  let description = [{
    `result = alpha[i] · acc[i, :] + Σ_j P[i, j] · V[j, :]`, with P (BM×BN)
    and V (BN×Dv) in the input element type and f32 accumulation: the update
    of the unnormalised output `u` of the online softmax.

    Example:
    ```mlir
    %acc1 = attn.pv %p, %v, %acc, %alpha
        : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Attn_Tile2D:$probs, Attn_Tile2D:$value,
                       Attn_AccTile:$acc, Attn_RowTile:$alpha);
  let results = (outs Attn_AccTile:$result);
  let assemblyFormat = [{
    $probs `,` $value `,` $acc `,` $alpha attr-dict
    `:` type($probs) `,` type($value) `,` type($acc) `,` type($alpha)
  }];
  let hasVerifier = 1;
}

def Attn_FinalizeOp : Attn_Op<"finalize", [
    Pure, AllTypesMatch<["max", "sum", "lse"]>]> {
  let summary = "divides by the row sum and forms the log-sum-exp";
  let description = [{
    The epilogue of one query tile: `O = acc / l` rounded to the output
    element type, and `LSE = ln 2 · m + ln l` (natural log; m is in base-2
    units). A row with l = 0 (every key masked) gives O = 0 and LSE = −inf.

    Example:
    ```mlir
    %o, %lse = attn.finalize %acc, %m, %l : tensor<64x64xf32>, tensor<64xf32> -> tensor<64x64xbf16>
    ```
  }];
  let arguments = (ins Attn_AccTile:$acc, Attn_RowTile:$max, Attn_RowTile:$sum);
  let results = (outs Attn_Tile2D:$output, Attn_RowTile:$lse);
  let assemblyFormat = [{
    $acc `,` $max `,` $sum attr-dict `:` type($acc) `,` type($max)
    `->` type($output)
  }];
  let hasVerifier = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
