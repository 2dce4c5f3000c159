//===- AttnNV.td - NVIDIA tile dialect ---------------------*- tablegen -*-===//
//
// attn_nv holds what the generic tile program (attn) becomes on NVIDIA GPUs
// before it is lowered op by op to NVVM:
//  * layouts, as tensor encodings: how a tile is spread over the threads of
//    a CTA (the mma/wgmma accumulator and operand fragments, row vectors);
//  * shared-memory buffers as values (`!attn_nv.smem`), filled by
//    asynchronous copies and read by the tensor cores;
//  * the tensor-core ops themselves (mma.sync, wgmma) and the few
//    scheduling ops NVVM has no counterpart for.
// Barriers, fences and cp.async groups are upstream NVVM ops.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNNV_IR_ATTNNV_TD
#define ATTN_DIALECT_ATTNNV_IR_ATTNNV_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/TensorEncoding.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def AttnNV_Dialect : Dialect {
  let name = "attn_nv";
  let cppNamespace = "::mlir::attn::nv";
  let summary = "attention tiles on NVIDIA GPUs: layouts, shared memory, tensor cores";
  let description = [{
    The NVIDIA level of attn: tile tensors carry a layout encoding saying
    which thread holds which element; tiles that the tensor cores read from
    memory live in shared-memory buffers (`!attn_nv.smem`) that asynchronous
    copies fill; `attn_nv.mma` (mma.sync) and `attn_nv.wgmma` (Hopper) are
    the products. The schedule (stages, prefetch, the order in which
    warpgroups issue, how long a product stays in flight) is explicit in the
    IR at this level; `convert-attn-nv-to-nvvm` then lowers each op alone.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
}

class AttnNV_Op<string mnemonic, list<Trait> traits = []>
    : Op<AttnNV_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Layouts (tensor encodings)
//===----------------------------------------------------------------------===//

def AttnNV_AccLayout : AttrDef<AttnNV_Dialect, "AccLayout", [
    DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let mnemonic = "acc";
  let summary = "the mma/wgmma accumulator fragment layout of an M×N tile";
  let description = [{
    Warp w of `warps` owns rows [w·M/warps, (w + 1)·M/warps) as 16-row m
    tiles; in each, thread (g = lane / 4, t = lane % 4) holds, per 8-column
    block j, the elements (g, 8j + 2t), (g, 8j + 2t + 1), (g + 8, 8j + 2t),
    (g + 8, 8j + 2t + 1): the C/D fragment of mma.sync.m16n8k16, which is also
    what wgmma.m64nNk16 gives each warp of a warpgroup. Columns are padded to
    a multiple of 16 in registers.

    With `col_groups = G` > 1 the warps form G groups of warps / G, and
    group k holds columns [k·N/G, (k + 1)·N/G) of every row as a tile of
    its own: each group's warps split the M rows as above. wgmma gives that
    when G warpgroups each issue the product for their own columns of B
    (the atomic backward's dQ part: 64 query rows over two warpgroups,
    FlashAttention-3's split of dQ over the head dim).

    Example: `tensor<128x64xf32, #attn_nv.acc<warps = 8>>`,
    `tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>`
  }];
  let parameters = (ins "int64_t":$warps,
                        DefaultValuedParameter<"int64_t", "1">:$col_groups);
  let builders = [
    AttrBuilder<(ins "int64_t":$warps), [{
      return $_get($_ctxt, warps, 1);
    }]>
  ];
  let assemblyFormat = "`<` struct(params) `>`";
}

def AttnNV_RowsLayout : AttrDef<AttnNV_Dialect, "RowsLayout", [
    DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let mnemonic = "rows";
  let summary = "a row vector laid out as the rows of the accumulator";
  let description = [{
    A length-M tile (running max, row sums, rescale factors) held as the rows
    of `#attn_nv.acc` with the same warps: each thread holds the elements of
    its two rows (g and g + 8) of every m tile; the four threads of a quad
    hold the same values. With `partial = true` they hold partial values
    instead, and an element is the sum of its quad's four: a row sum can
    stay spread over the quad through any linear arithmetic until a
    `attn_nv.convert_layout` adds it up (attn-nv-defer-row-sums).

    Example: `tensor<128xf32, #attn_nv.rows<warps = 8>>`,
    `tensor<128xf32, #attn_nv.rows<warps = 8, partial = true>>`
  }];
  let parameters = (ins "int64_t":$warps,
                        DefaultValuedParameter<"bool", "false">:$partial);
  let builders = [
    AttrBuilder<(ins "int64_t":$warps), [{
      return $_get($_ctxt, warps, false);
    }]>
  ];
  let assemblyFormat = "`<` struct(params) `>`";
}

def AttnNV_ColsLayout : AttrDef<AttnNV_Dialect, "ColsLayout", [
    DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let mnemonic = "cols";
  let summary = "a 1×C tile laid out as the columns of the accumulator";
  let description = [{
    A 1×C tile broadcast along the rows of an `#attn_nv.acc` tile with the
    same warps (the backward's row terms in its keys-major score tiles):
    each lane holds two adjacent columns of every 64, columns
    64r + 8·(lane / 4) + 2·(lane % 4) + e as values 2r + e, the same in
    every warp: what one load a lane gives. A map that broadcasts the tile
    over an acc tile takes each column it needs from the lane holding it
    (a shuffle, where the map is), so the columns take registers only
    there.

    Example: `tensor<1x64xf32, #attn_nv.cols<warps = 4>>`
  }];
  let parameters = (ins "int64_t":$warps);
  let assemblyFormat = "`<` struct(params) `>`";
}

def AttnNV_OperandALayout : AttrDef<AttnNV_Dialect, "OperandALayout", [
    DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let mnemonic = "operand_a";
  let summary = "16-bit M×K tile as register A operands of mma.sync / wgmma";
  let description = [{
    Per 16-row m tile of a warp (as in `#attn_nv.acc`) and 16-column k
    block, the four 32-bit registers of the A fragment of mma.m16n8k16, each
    holding two adjacent elements; wgmma with A from registers takes the
    same fragment. Columns are padded to a multiple of 16 in registers. P
    reaches the P·V product in this layout without leaving the registers.

    Example: `tensor<128x64xbf16, #attn_nv.operand_a<warps = 8>>`
  }];
  let parameters = (ins "int64_t":$warps);
  let assemblyFormat = "`<` struct(params) `>`";
}

def AttnNV_SharedLayout : I32EnumAttr<"SharedLayout",
    "how a tile's rows are laid out in shared memory", [
    I32EnumAttrCase<"Padded", 0, "padded">,
    I32EnumAttrCase<"Swizzle128B", 1, "swizzle_128b">,
    I32EnumAttrCase<"SwizzlePairs", 2, "swizzle_pairs">]> {
  let cppNamespace = "::mlir::attn::nv";
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def AttnNV_SmemType : TypeDef<AttnNV_Dialect, "Smem"> {
  let mnemonic = "smem";
  let summary = "a tile buffer in shared memory";
  let description = [{
    R×C tiles of `element_type` in shared memory, S of them when the shape
    has a leading stage dimension (S×R×C). `padded`: rows of C elements
    (rounded up to 16) plus 16 bytes, so the 8 rows one ldmatrix reads fall
    in 8 bank groups; `swizzle_128b`: blocks of R rows × 128 bytes (64
    columns of 16-bit elements, 128 of 8-bit ones), ceil(C / block) of
    them, 16-byte chunk c of row r at chunk c ^ (r mod 8), each block
    1024-byte aligned (what wgmma's matrix descriptors read); when the
    block does not divide C (16-bit C = 96: 1.5 blocks), the last block's
    rest is never written or read. `swizzle_pairs` (f32 only): the blocks
    of `swizzle_128b`, chunk c of row r at c ^ k(r mod 8) with k(r) =
    (r mod 4) · 2 + r / 4, for a captured table's score tiles, which
    cp.async writes and threads read in 8-byte pairs in the accumulator's
    order: a half-warp's four rows then fall in distinct 32-byte bank
    groups (with c ^ (r mod 8), rows r and r ^ 1 share one); no wgmma or
    TMA reads it, so no alignment beyond 16 bytes. The value is the
    buffer's place in the CTA's shared memory, assigned by
    `attn-nv-allocate-shared`.

    Example: `!attn_nv.smem<3x128x128xbf16, swizzle_128b>`
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::attn::nv::SharedLayout":$layout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    /// Rows and columns of one tile (the last two dims).
    int64_t getRows() const { return getShape()[getRank() - 2]; }
    int64_t getCols() const { return getShape()[getRank() - 1]; }
    /// Number of tiles (the stage dim, 1 without one).
    int64_t getStages() const { return getRank() == 3 ? getShape()[0] : 1; }
    /// Bytes of one tile and of the whole buffer.
    int64_t getTileBytes() const;
    int64_t getBytes() const { return getStages() * getTileBytes(); }
    /// The type of one tile of a staged buffer.
    SmemType getTileType() const;
  }];
}

def AttnNV_BarriersType : TypeDef<AttnNV_Dialect, "Barriers"> {
  let mnemonic = "barriers";
  let summary = "mbarriers in shared memory, one per stage of a staged tile";
  let description = [{
    `count` mbarrier objects (8 bytes each) in the CTA's shared memory, used
    in turn: use u of the buffer is barrier u mod count in its phase
    floor(u / count), so a stage's barrier completes once per tile that the
    stage holds. The value is the first barrier's place, assigned by
    `attn-nv-allocate-shared`.

    Example: `!attn_nv.barriers<3>`
  }];
  let parameters = (ins "int64_t":$count);
  let assemblyFormat = "`<` $count `>`";
  let genVerifyDecl = 1;
}

def AttnNV_TensorMapPtr : Type<
    CPred<"::llvm::isa<::mlir::LLVM::LLVMPointerType>($_self)">,
    "the generic address of a kernel's grid-constant tensor map (!llvm.ptr)">;

def AttnNV_AnySmem : Type<CPred<"::llvm::isa<::mlir::attn::nv::SmemType>($_self)">,
                          "shared-memory tile", "::mlir::attn::nv::SmemType">;
def AttnNV_Operand : AnyTypeOf<[AttnNV_AnySmem, AnyRankedTensor]>;

//===----------------------------------------------------------------------===//
// Shared memory and copies
//===----------------------------------------------------------------------===//

def AttnNV_AllocSharedOp : AttnNV_Op<"alloc_shared"> {
  let summary = "a shared-memory buffer of the CTA";
  let description = [{
    Reserves a tile buffer in the CTA's shared memory for the whole kernel.
    `offset` (bytes from the 1024-byte-aligned base) is assigned by
    `attn-nv-allocate-shared`; lowering needs it.

    Example:
    ```mlir
    %kbuf = attn_nv.alloc_shared {offset = 32768} : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs AttnNV_AnySmem:$buffer);
  let assemblyFormat = "attr-dict `:` qualified(type($buffer))";
  let hasVerifier = 1;
}

def AttnNV_SlotOp : AttnNV_Op<"slot", [Pure]> {
  let summary = "one stage of a multi-buffered shared-memory tile";
  let description = [{
    The tile of stage `index` (taken modulo the stage count) of an S×R×C
    buffer.

    Example:
    ```mlir
    %k = attn_nv.slot %kbuf[%i] : !attn_nv.smem<3x128x128xbf16, swizzle_128b> -> !attn_nv.smem<128x128xbf16, swizzle_128b>
    ```
  }];
  let arguments = (ins AttnNV_AnySmem:$buffer, Index:$index);
  let results = (outs AttnNV_AnySmem:$tile);
  let assemblyFormat = [{
    $buffer `[` $index `]` attr-dict `:` qualified(type($buffer)) `->`
    qualified(type($tile))
  }];
  let hasVerifier = 1;
}

def AttnNV_CopyAsyncOp : AttnNV_Op<"copy_async", [AttrSizedOperandSegments]> {
  let summary = "starts copying a tile from global to shared memory (cp.async)";
  let description = [{
    Every thread of the CTA issues `cp.async` of 16-byte pieces of the tile
    `source[batch, head, row : row + R, :]` into `dest`; rows at or past
    `bound` and columns past the head dim are zero-filled (nothing is read
    for them). The copies complete asynchronously: a `nvvm.cp.async.commit.group`
    after them and a `nvvm.cp.async.wait.group` (then a barrier) before any
    read of `dest`. Rows of the source must be 16-byte aligned.
    `rows_per_head` and `start` pack heads as for `attn.load_tile`, and
    `pages` gathers the rows of a paged cache through a block table as it
    does. With `transposed`, `dest` (C×R) receives the tile's transpose:
    8-bit wgmma reads P·V's V K-major only. cp.async cannot transpose, so
    such a copy must become a transposed `attn_nv.copy_tma`
    (`attn-nv-pipeline-copies`), which reads a source whose keys are
    contiguous.

    `strided` chooses how the lowering forms the addresses, not what is
    copied: where each pass of the CTA's threads covers whole rows, every
    pass copies the same chunk of rows a pass apart, from one source
    pointer and one shared address a thread, all derived in place. In a
    loop that keeps LLVM from hoisting a row, a source offset and a shared
    address per chunk out of it, each live across the loop in registers
    (the backward's spills; `attn-nv-pipeline-copies` marks its loops'
    copies). Without it every chunk's address is its own, which LLVM
    hoists where it can; that is the cheaper form outside register-bound
    loops. A strided copy reads whole rows of one head: no `rows_per_head`,
    `pages` or `transposed`.

    Example:
    ```mlir
    attn_nv.copy_async %K[%b, %h, %kv] bounds %nk into %k
        : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, !attn_nv.smem<128x128xbf16, swizzle_128b>
    attn_nv.copy_async %Q[%b, %h, %row] bounds %nq into %q strided
        : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, !attn_nv.smem<64x128xbf16, swizzle_128b>
    attn_nv.copy_async %V[%b, %h, %kv] bounds %nk into %vt transposed
        : memref<?x?x?x128xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>>, !attn_nv.smem<128x128xf8E4M3FN, swizzle_128b>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "source", [MemRead]>:$source,
                       Index:$batch, Index:$head, Index:$row, Index:$bound,
                       Optional<Index>:$rowsPerHead,
                       Arg<AttnNV_AnySmem, "destination", [MemWrite]>:$dest,
                       Arg<Optional<MemRefRankOf<[I32], [2]>>, "block table",
                           [MemRead]>:$pages,
                       Optional<Index>:$start, UnitAttr:$transposed,
                       UnitAttr:$strided);
  let assemblyFormat = [{
    $source `[` $batch `,` $head `,` $row `]`
    (`rows_per_head` $rowsPerHead^)? (`start` $start^)?
    (`pages` `(` $pages^ `:` type($pages) `)`)? `bounds` $bound `into` $dest
    (`transposed` $transposed^)? (`strided` $strided^)?
    attr-dict `:` type($source) `,` qualified(type($dest))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$source, "::mlir::Value":$batch,
                   "::mlir::Value":$head, "::mlir::Value":$row,
                   "::mlir::Value":$bound, "::mlir::Value":$rowsPerHead,
                   "::mlir::Value":$dest), [{
      build($_builder, $_state, source, batch, head, row, bound, rowsPerHead,
            dest, ::mlir::Value(), ::mlir::Value(), /*transposed=*/false,
            /*strided=*/false);
    }]>,
    OpBuilder<(ins "::mlir::Value":$source, "::mlir::Value":$batch,
                   "::mlir::Value":$head, "::mlir::Value":$row,
                   "::mlir::Value":$bound, "::mlir::Value":$rowsPerHead,
                   "::mlir::Value":$dest, "::mlir::Value":$pages), [{
      build($_builder, $_state, source, batch, head, row, bound, rowsPerHead,
            dest, pages, ::mlir::Value(), /*transposed=*/false,
            /*strided=*/false);
    }]>
  ];
  let hasVerifier = 1;
}

def AttnNV_CopyTableAsyncOp : AttnNV_Op<"copy_table_async"> {
  let summary = "starts copying a tile of a 2-D f32 table to shared memory (cp.async)";
  let description = [{
    Every thread of the CTA issues `cp.async` of pieces of the R×C tile
    `source[row : row + R, col : col + C]` of a captured 2-D f32 table (a
    bias indexed by query and key) into `dest`; elements at rows >= `rows`
    or columns >= `cols` are zero-filled (nothing is read for them). Where
    the table's rows are 16-byte aligned with unit column stride (checked
    at run time, one uniform branch) the pieces are 16-byte chunks, else
    single elements. Completion as for `attn_nv.copy_async`: a commit
    group after, a wait group and a barrier before any read of `dest`.

    Example:
    ```mlir
    attn_nv.copy_table_async %bias[%row, %kv] bounds %nq, %nk into %t
        : memref<?x?xf32, strided<[?, ?], offset: ?>>, !attn_nv.smem<128x64xf32, swizzle_128b>
    ```
  }];
  let arguments = (ins Arg<MemRefRankOf<[F32], [2]>, "source", [MemRead]>:$source,
                       Index:$row, Index:$col, Index:$rows, Index:$cols,
                       Arg<AttnNV_AnySmem, "destination", [MemWrite]>:$dest);
  let assemblyFormat = [{
    $source `[` $row `,` $col `]` `bounds` $rows `,` $cols `into` $dest
    attr-dict `:` type($source) `,` qualified(type($dest))
  }];
  let hasVerifier = 1;
}

def AttnNV_LoadSharedOp : AttnNV_Op<"load_shared"> {
  let summary = "reads an f32 shared-memory tile into accumulator registers";
  let description = [{
    Each thread reads its `#attn_nv.acc` elements of the R×C f32 tile
    `source`, two adjacent columns as one 8-byte load (the reverse of
    `attn_nv.store_shared`). A table staged by `attn_nv.copy_table_async`
    is read this way by the maps that use it.

    Example:
    ```mlir
    %b = attn_nv.load_shared %t : !attn_nv.smem<128x64xf32, swizzle_128b> -> tensor<128x64xf32, #attn_nv.acc<warps = 8>>
    ```
  }];
  let arguments = (ins Arg<AttnNV_AnySmem, "source", [MemRead]>:$source);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` type($result)";
  let hasVerifier = 1;
}

def AttnNV_AllocBarriersOp : AttnNV_Op<"alloc_barriers"> {
  let summary = "mbarriers of the CTA in shared memory";
  let description = [{
    Reserves `count` mbarriers (8-byte aligned) for the whole kernel;
    `offset` (bytes from the aligned base of shared memory) is assigned by
    `attn-nv-allocate-shared`, as for `alloc_shared`.

    Example:
    ```mlir
    %kbar = attn_nv.alloc_barriers {offset = 98304} : !attn_nv.barriers<3>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs AttnNV_BarriersType:$barriers);
  let assemblyFormat = "attr-dict `:` qualified(type($barriers))";
  let hasVerifier = 1;
}

def AttnNV_InitBarriersOp : AttnNV_Op<"init_barriers"> {
  let summary = "initializes mbarriers for `arrivals` arrivals each (one thread)";
  let description = [{
    Thread 0 initializes every barrier of the buffer with an arrival count
    of `arrivals` (default 1: the thread that issues a tile's bulk copies
    arrives once, with the tile's bytes as its transaction count; a stage's
    "empty" barriers count one arrival per consumer warp,
    `attn_nv.arrive_barrier`). The other threads may use them only after a
    CTA barrier that follows this op.

    Example:
    ```mlir
    attn_nv.init_barriers %kbar : !attn_nv.barriers<3>
    attn_nv.init_barriers %kempty arrivals 8 : !attn_nv.barriers<3>
    ```
  }];
  let arguments = (ins Arg<AttnNV_BarriersType, "barriers", [MemWrite]>:$barriers,
                       DefaultValuedAttr<I64Attr, "1">:$arrivals);
  let assemblyFormat = [{
    $barriers (`arrivals` $arrivals^)? attr-dict `:` qualified(type($barriers))
  }];
  let hasVerifier = 1;
}

def AttnNV_CopyTmaOp : AttnNV_Op<"copy_tma"> {
  let summary = "copies a tile from global to shared memory by TMA";
  let description = [{
    Thread 0 announces the tile's bytes on barrier use `use` of `barriers`
    (`mbarrier.arrive.expect_tx`) and issues the bulk tensor copies
    (`cp.async.bulk.tensor.4d`) of the tile `[batch, head, row : row + R, :]`
    described by the tensor map at `map` -- a (B, H, N, D) view whose box is
    R rows by one 128-byte swizzle block of columns (64 16-bit or 128 8-bit
    elements), one copy per block of `dest` -- completing on that barrier.
    With `transposed` the map views the tensor as (B, H, D, N) (its keys
    contiguous) and `dest` (R = D rows, C keys) receives the columns
    `row : row + C` of it: the K-major V that 8-bit wgmma needs for P·V. Rows at or past N and
    columns past D are zero-filled by the copy engine. Any thread may read
    `dest` after an `attn_nv.wait_barrier` of the same use. The operands
    are the map's coordinates: through a ragged map (KernelABI.h's
    TensorMapForm, a packed batch) `attn-nv-pipeline-copies` passes a
    sequence's end e as `batch` and `row + N − e` as `row`, so that the
    zero fill starts at e.

    With `after %empty` (barriers of the same count, one per stage), thread
    0 first waits until use `use − count` of `empty` has completed, i.e.
    until every reader released what the stage held before (phase
    floor(use / count) − 1, by parity: the first `count` uses pass at once).

    With `single_thread` (in the producer region of attn_nv.warp_specialize,
    which one elected thread runs) the thread that reaches the op does all
    of this; thread 0 is a consumer there.

    Example:
    ```mlir
    attn_nv.copy_tma %kmap[%b, %h, %kv] into %k, %kbar[%it]
        : !llvm.ptr, !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.barriers<3>
    attn_nv.copy_tma %kmap[%b, %h, %kv] into %k, %kbar[%it] after %kempty
        : !llvm.ptr, !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.barriers<3>, !attn_nv.barriers<3>
    attn_nv.copy_tma %vmap[%b, %h, %kv] into %vt, %vbar[%it] transposed
        : !llvm.ptr, !attn_nv.smem<128x128xf8E4M3FN, swizzle_128b>, !attn_nv.barriers<3>
    ```
  }];
  let arguments = (ins AttnNV_TensorMapPtr:$map, Index:$batch, Index:$head,
                       Index:$row,
                       Arg<AttnNV_AnySmem, "destination", [MemWrite]>:$dest,
                       Arg<AttnNV_BarriersType, "barriers", [MemWrite]>:$barriers,
                       Index:$use,
                       Arg<Optional<AttnNV_BarriersType>, "empty barriers",
                           [MemRead, MemWrite]>:$empty,
                       UnitAttr:$single_thread, UnitAttr:$transposed);
  let assemblyFormat = [{
    $map `[` $batch `,` $head `,` $row `]` `into` $dest `,` $barriers `[` $use `]`
    (`after` $empty^)? (`transposed` $transposed^)?
    attr-dict `:` type($map) `,` qualified(type($dest)) `,` qualified(type($barriers))
    (`,` qualified(type($empty))^)?
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$map, "::mlir::Value":$batch,
                   "::mlir::Value":$head, "::mlir::Value":$row,
                   "::mlir::Value":$dest, "::mlir::Value":$barriers,
                   "::mlir::Value":$use), [{
      build($_builder, $_state, map, batch, head, row, dest, barriers, use,
            ::mlir::Value(), /*single_thread=*/false, /*transposed=*/false);
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Bytes the copies of one tile write (whole boxes, zero fill included):
    /// the transaction count of the barrier.
    int64_t getTileBytes();
  }];
}

def AttnNV_StoreTmaOp : AttnNV_Op<"store_tma"> {
  let summary = "stores a shared tile to global memory by TMA, each warp its rows";
  let description = [{
    The output's epilogue by the copy engine: `source` holds a tile that the
    warps wrote with `attn_nv.store_shared` (an accumulator's distribution:
    warp w holds rows `16 w ... 16 w + 15`). Each warp makes its writes
    visible to the async proxy (`fence.proxy.async.shared::cta`,
    `bar.warp.sync`) and its lane 0 issues the bulk tensor stores
    (`cp.async.bulk.tensor.4d.global.shared::cta`) of its rows, one per
    128-byte swizzle block of columns, to `[batch, head, row + 16 w, :]` of
    the tensor map at `map` (a (B, H, N, D) view whose box is 16 rows by one
    block), then waits until they have read `source`
    (`cp.async.bulk.wait_group.read 0`), so that the shared memory may be
    reused or released. Rows at or past N are not written. No barrier
    between warps: each reads only what it wrote. With `no_wait` it returns
    once the stores are issued: an `attn_nv.wait_stores_read` must come
    before `source` is written again or released, and before the kernel
    ends.

    Example:
    ```mlir
    attn_nv.store_shared %out, %q : tensor<128x128xbf16, #attn_nv.acc<warps = 8>>, !attn_nv.smem<128x128xbf16, swizzle_128b>
    attn_nv.store_tma %q into %omap[%b, %h, %row]
        : !attn_nv.smem<128x128xbf16, swizzle_128b>, !llvm.ptr
    attn_nv.store_tma %q into %omap[%b, %h, %row] no_wait
        : !attn_nv.smem<128x128xbf16, swizzle_128b>, !llvm.ptr
    ```
  }];
  // The write is to the tensor the map describes (global memory).
  let arguments = (ins Arg<AttnNV_AnySmem, "source", [MemRead]>:$source,
                       Arg<AttnNV_TensorMapPtr, "the tensor map of the destination",
                           [MemWrite]>:$map,
                       Index:$batch, Index:$head, Index:$row,
                       UnitAttr:$no_wait);
  let assemblyFormat = [{
    $source `into` $map `[` $batch `,` $head `,` $row `]` (`no_wait` $no_wait^)?
    attr-dict `:` qualified(type($source)) `,` type($map)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$source, "::mlir::Value":$map,
                   "::mlir::Value":$batch, "::mlir::Value":$head,
                   "::mlir::Value":$row), [{
      build($_builder, $_state, source, map, batch, head, row,
            /*no_wait=*/false);
    }]>
  ];
  let hasVerifier = 1;
}

def AttnNV_WaitStoresReadOp : AttnNV_Op<"wait_stores_read"> {
  let summary = "waits until this thread's bulk stores have read shared memory";
  let description = [{
    `cp.async.bulk.wait_group.read 0`: the stores that this thread issued
    and committed (`attn_nv.store_tma ... no_wait`) have read their source
    tiles, which may then be written again or released. A thread that
    issued none passes at once.

    Example:
    ```mlir
    attn_nv.store_tma %q into %omap[%b, %h, %row] no_wait
        : !attn_nv.smem<128x128xbf16, swizzle_128b>, !llvm.ptr
    ...
    attn_nv.wait_stores_read
    attn_nv.arrive_barrier %qempty[%k] : !attn_nv.barriers<2>
    ```
  }];
  // Orders the stores' reads of shared memory before what follows.
  let arguments = (ins);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def AttnNV_ReduceBulkOp : AttnNV_Op<"reduce_bulk"> {
  let summary = "adds an f32 register tile into global memory by the copy engine, each warp its rows";
  let description = [{
    The atomic backward's dQ parts by bulk reductions instead of one
    `red.global.add.v2.f32` per pair of columns a thread holds (which kept
    the load/store unit's queue full and held every later fence behind the
    reductions in flight). Each warp waits until its last bulk reductions
    have read `staging` (`bar.warp.sync` after the lanes' `wait_group.read`
    of the previous use), writes its values of `tile` (an f32
    `#attn_nv.acc`, with any column groups) into `staging` (a padded f32
    shared tile of the tile's shape), makes them visible to the async proxy
    (`fence.proxy.async.shared::cta`, `bar.warp.sync`), and lane r of the
    warp adds row r of its rows, the columns of its column group, with one
    `cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32` to
    `dest[batch, head, row + r, :]` of a (B, H, N, D) f32 memref; rows at or
    past `bound` are not added. The lanes then wait until their reductions
    have read `staging` (`cp.async.bulk.wait_group.read 0`). No barrier
    between warps: each reads only what it wrote.

    Example:
    ```mlir
    attn_nv.reduce_bulk %part, %stage into %acc[%b, %h, %row] bounds %n
        : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>,
          !attn_nv.smem<64x128xf32, padded>, memref<?x?x?x128xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tile,
                       Arg<AttnNV_AnySmem, "staging", [MemRead, MemWrite]>:$staging,
                       Arg<AnyMemRef, "dest", [MemRead, MemWrite]>:$dest,
                       Index:$batch, Index:$head, Index:$row, Index:$bound);
  let assemblyFormat = [{
    $tile `,` $staging `into` $dest `[` $batch `,` $head `,` $row `]`
    `bounds` $bound attr-dict `:` type($tile) `,` qualified(type($staging))
    `,` type($dest)
  }];
  let hasVerifier = 1;
}

def AttnNV_WaitBarrierOp : AttnNV_Op<"wait_barrier"> {
  let summary = "waits until use `use` of a barrier buffer has completed";
  let description = [{
    Every thread waits (`mbarrier.try_wait.parity`) for barrier `use mod
    count` to complete its phase `floor(use / count)`: the tile copied with
    that use is then in shared memory.

    Example:
    ```mlir
    attn_nv.wait_barrier %kbar[%it] : !attn_nv.barriers<3>
    ```
  }];
  let arguments = (ins Arg<AttnNV_BarriersType, "barriers", [MemRead, MemWrite]>:$barriers,
                       Index:$use);
  let assemblyFormat = "$barriers `[` $use `]` attr-dict `:` qualified(type($barriers))";
}

def AttnNV_ArriveBarrierOp : AttnNV_Op<"arrive_barrier"> {
  let summary = "each warp arrives once on use `use` of a barrier buffer";
  let description = [{
    The warp synchronizes (`bar.warp.sync`, so that what any of its lanes
    did before is ordered before the arrival) and its lane 0 arrives
    (`mbarrier.arrive`, release semantics) on barrier `use mod count`: a
    buffer initialized with one arrival per warp completes the phase of
    that use once every warp has arrived. A consumer warp releases a stage
    this way after the wait that retired its last read of it.

    Example:
    ```mlir
    attn_nv.arrive_barrier %kempty[%it] : !attn_nv.barriers<3>
    ```
  }];
  let arguments = (ins Arg<AttnNV_BarriersType, "barriers", [MemRead, MemWrite]>:$barriers,
                       Index:$use);
  let assemblyFormat = "$barriers `[` $use `]` attr-dict `:` qualified(type($barriers))";
}

def AttnNV_LoadOperandOp : AttnNV_Op<"load_operand"> {
  let summary = "reads a shared-memory tile into A-operand registers (ldmatrix)";
  let description = [{
    Each warp reads its rows of the tile as mma.sync A fragments (ldmatrix),
    so that a tile used by every K/V step (Q) is read from shared memory
    once.

    Example:
    ```mlir
    %qa = attn_nv.load_operand %q : !attn_nv.smem<128x64xbf16, padded> -> tensor<128x64xbf16, #attn_nv.operand_a<warps = 4>>
    ```
  }];
  let arguments = (ins Arg<AttnNV_AnySmem, "tile", [MemRead]>:$source);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` type($result)";
  let hasVerifier = 1;
}

def AttnNV_StoreSharedOp : AttnNV_Op<"store_shared"> {
  let summary = "writes an accumulator tile into a shared-memory tile";
  let description = [{
    Each thread writes its `#attn_nv.acc` values into `dest` (a 2-D shared
    tile of the same shape), two adjacent columns as one 32-bit store,
    rounding f32 to the buffer's 16-bit element type (round to nearest
    even). A register tile that a product needs in another distribution
    (the backward's dSᵀ, read transposed as wgmma's A) goes through shared
    memory this way; the writes are ordinary (generic proxy) stores, so a
    wgmma reading them needs a proxy fence and a barrier after.

    Example:
    ```mlir
    attn_nv.store_shared %ds, %buf : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, !attn_nv.smem<64x64xbf16, swizzle_128b>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tile,
                       Arg<AttnNV_AnySmem, "dest", [MemWrite]>:$dest);
  let assemblyFormat = [{
    $tile `,` $dest attr-dict `:` type($tile) `,` qualified(type($dest))
  }];
  let hasVerifier = 1;
}

def AttnNV_ConvertLayoutOp : AttnNV_Op<"convert_layout", [Pure]> {
  let summary = "re-distributes a register tile";
  let description = [{
    Two conversions:
    * an `#attn_nv.acc` tile into the `#attn_nv.operand_a` fragments of the
      same warps. The accumulator fragments of two adjacent 8-column blocks
      are exactly the A fragment of one 16-column k block, so this moves no
      data between threads: it packs pairs of elements, rounding f32 to the
      result's 16-bit element type (round to nearest even) on the way;
    * partial row sums (`#attn_nv.rows<..., partial = true>`) into rows:
      each quad adds its four values (two butterfly shuffles).

    Example:
    ```mlir
    %pa = attn_nv.convert_layout %p : tensor<128x64xf32, #attn_nv.acc<warps = 8>> -> tensor<128x64xbf16, #attn_nv.operand_a<warps = 8>>
    %l = attn_nv.convert_layout %lp : tensor<128xf32, #attn_nv.rows<warps = 8, partial = true>> -> tensor<128xf32, #attn_nv.rows<warps = 8>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor cores
//===----------------------------------------------------------------------===//

def AttnNV_MmaOp : AttnNV_Op<"mma", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "tile product on mma.sync.m16n8k16 (sm_80 and newer)";
  let description = [{
    `result = acc + lhs · op(rhs)`, f32 accumulation. `lhs` (M×K) is an
    `#attn_nv.operand_a` register tile or a padded shared-memory tile (read
    with ldmatrix per k block); `rhs` is a padded shared-memory tile, N×K
    with `transpose_rhs` (K rows, as for QKᵀ) or K×N without (V of P·V, read
    with ldmatrix.trans); `acc` is `#attn_nv.acc`. Each warp computes its
    own rows; the op is synchronous.

    Example:
    ```mlir
    %s = attn_nv.mma %qa, %k, %zero transpose_rhs
        : tensor<128x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x64xbf16, padded>,
          tensor<128x64xf32, #attn_nv.acc<warps = 4>>
    ```
  }];
  let arguments = (ins Arg<AttnNV_Operand, "lhs", [MemRead]>:$lhs,
                       Arg<AttnNV_AnySmem, "rhs", [MemRead]>:$rhs,
                       AnyRankedTensor:$acc, UnitAttr:$transposeRhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc (`transpose_rhs` $transposeRhs^)? attr-dict
    `:` qualified(type($lhs)) `,` qualified(type($rhs)) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def AttnNV_WgmmaOp : AttnNV_Op<"wgmma", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "issues a tile product on wgmma.mma_async (sm_90a)";
  let description = [{
    Issues `result = acc + lhs · op(rhs)` (f32 accumulation) as
    wgmma.mma_async m64nNk16 instructions, one warpgroup per 64 rows, and
    commits them as one wgmma group. `lhs` is a `swizzle_128b` shared tile
    (K-major; with `transpose_lhs` a K×M tile read MN-major, as the
    backward's (dSᵀ)ᵀ K reads dSᵀ, with a K×N rhs) or an
    `#attn_nv.operand_a` register tile; `rhs` a
    `swizzle_128b` shared tile, N×K with `transpose_rhs` (K-major) or K×N
    without (MN-major). K is a multiple of the k step (16, or 32 for
    f8E4M3FN tiles, which are read K-major only: m64nNk32.e4m3) and N of 16
    up to 256; neither need be a multiple of the 128-byte swizzle block. An
    `acc` that is a splat of 0 starts from zero.
    The product runs asynchronously: `result`, and the registers of `acc`
    and `lhs`, may be read or written only after an `attn_nv.wgmma_wait`
    that covers this group.

    `advance_in_ptx` chooses how the k steps' descriptors are formed, not
    what is computed: each is the tile's own descriptor plus the step's
    offset added inside the instruction's inline PTX. Without it the
    offset is LLVM arithmetic, which LICM hoists out of a loop when the
    tiles are loop-invariant: a register pair per k step live through the
    loop. `attn-nv-assign-layouts` sets it in the backward's kernels, whose
    own tiles (K and V, or Q and dO) stay in shared memory through their
    loop beside accumulators that fill the registers; the forward keeps
    LLVM's choice, which costs it no spill.

    Example:
    ```mlir
    %s0 = attn_nv.wgmma %q, %k, %zero transpose_rhs
        : !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.smem<128x128xbf16, swizzle_128b>,
          tensor<128x128xf32, #attn_nv.acc<warps = 8>>
    %s = attn_nv.wgmma_wait %s0 {pending = 0} : tensor<128x128xf32, #attn_nv.acc<warps = 8>>
    ```
  }];
  let arguments = (ins Arg<AttnNV_Operand, "lhs", [MemRead]>:$lhs,
                       Arg<AttnNV_AnySmem, "rhs", [MemRead]>:$rhs,
                       AnyRankedTensor:$acc, UnitAttr:$transposeRhs,
                       UnitAttr:$transposeLhs, UnitAttr:$advanceInPtx);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc (`transpose_rhs` $transposeRhs^)?
    (`transpose_lhs` $transposeLhs^)? (`advance_in_ptx` $advanceInPtx^)?
    attr-dict
    `:` qualified(type($lhs)) `,` qualified(type($rhs)) `,` type($acc)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Elements of K one instruction reduces over: 16 (bf16, f16) or 32
    /// (f8E4M3FN).
    int64_t getKStep();
  }];
}

def AttnNV_WgmmaWaitOp : AttnNV_Op<"wgmma_wait", [AllTypesMatch<["values", "results"]>]> {
  let summary = "waits until at most `pending` wgmma groups are in flight";
  let description = [{
    `wgmma.wait_group pending`: when it returns, every wgmma group of this
    thread but the last `pending` has completed. Its operands are the values
    those groups write or read (accumulators, register operands); its results
    are the same values after the wait, and only those may be used, so no
    read or write of them can move across it.

    Example:
    ```mlir
    %s, %acc = attn_nv.wgmma_wait %s0, %acc0 {pending = 0}
        : tensor<128x128xf32, #attn_nv.acc<warps = 8>>, tensor<128x128xf32, #attn_nv.acc<warps = 8>>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values, I64Attr:$pending);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let hasVerifier = 1;
}

def AttnNV_WarpgroupTurnOp : AttnNV_Op<"warpgroup_turn", [
    SingleBlockImplicitTerminator<"::mlir::attn::nv::YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "the warpgroups run the body one after the other";
  let description = [{
    Warpgroup g starts the body only after warpgroup g − 1 has finished it
    (named barriers: g − 1 arrives, g syncs); the body is typically the issue
    of a product, so the tensor cores finish one warpgroup's product before
    the next one's and each warpgroup's softmax overlaps another's product
    (the idea of FlashAttention-3's ping-pong). `warpgroups` is the number of
    warpgroups of the CTA; the results are the body's.

    A named barrier must not see warpgroup g − 1 arrive twice before g
    syncs once. Without a CTA barrier per turn (the TMA kernels' K/V loop)
    warpgroup 0 may run ahead: then the turn is numbered, `turn %k
    rotation R`, and turn k uses the barriers of set k mod R. The schedule
    must guarantee that warpgroup 0 starts turn k + R only after every other
    warpgroup started turn k (attn-nv-order-warpgroups: the turn is the K
    tile's index and R its stages; tile k + R is copied only after every
    warp released tile k, which it does after its turn k).

    Example:
    ```mlir
    %s0 = attn_nv.warpgroup_turn warpgroups 2 -> tensor<128x128xf32, #attn_nv.acc<warps = 8>> {
      %s = attn_nv.wgmma %q, %k, %zero transpose_rhs : ...
      attn_nv.yield %s : tensor<128x128xf32, #attn_nv.acc<warps = 8>>
    }
    %s1 = attn_nv.warpgroup_turn warpgroups 2 turn %it rotation 3 -> tensor<128x128xf32, #attn_nv.acc<warps = 8>> {
      ...
    }
    ```
  }];
  let arguments = (ins I64Attr:$warpgroups, Optional<Index>:$turn,
                       OptionalAttr<I64Attr>:$rotation);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `warpgroups` $warpgroups (`turn` $turn^ `rotation` $rotation)?
    (`->` type($results)^)? $body attr-dict
  }];
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$results, "::mlir::IntegerAttr":$warpgroups), [{
      build($_builder, $_state, results, warpgroups, ::mlir::Value(),
            ::mlir::IntegerAttr());
    }]>
  ];
  let hasVerifier = 1;
}

def AttnNV_WarpSpecializeOp : AttnNV_Op<"warp_specialize", [
    SingleBlockImplicitTerminator<"::mlir::attn::nv::YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "consumer warpgroups and one producer warpgroup run apart";
  let description = [{
    The CTA's threads split: threads [0, consumer_threads) run the
    `consumers` region after `setmaxnreg.inc` to `consumer_registers`; the
    warpgroup after them (the last, 128 threads) gives its registers back
    (`setmaxnreg.dec` to `producer_registers`) and its first thread alone
    runs the `producer` region -- typically the loop of TMA copies
    (`copy_tma ... {single_thread}`) that fills the stages the consumers
    read, coupled to them only through mbarriers. Values from before the op
    are visible in both regions; neither region yields anything, and no CTA
    barrier (`bar.sync 0`) may run inside (the other side never reaches it).

    The consumers keep thread ids, layouts and stores of a kernel without
    the producer. The split must fit the register file: consumer_threads ·
    consumer_registers + 128 · producer_registers ≤ 65536, each a multiple
    of 8 in [24, 256] (setmaxnreg's bounds); the lowering checks that the
    kernel's `attn.config` has `warp_specialize` and consumer_threads =
    32 · warps (the launch's block size is the config's).

    Example:
    ```mlir
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
      %r = scf.for %it = %c0 to %n step %c1 iter_args(...) { ... }
      attn_nv.store ...
    } producer(40 registers) {
      scf.for %u = %c1 to %n step %c1 {
        attn_nv.copy_tma %kmap[%b, %h, %kv] into %k, %kfull[%u] after %kempty {single_thread} : ...
      }
    }
    ```
  }];
  let arguments = (ins I64Attr:$consumer_threads, I64Attr:$consumer_registers,
                       I64Attr:$producer_registers);
  let regions = (region SizedRegion<1>:$consumers, SizedRegion<1>:$producer);
  let assemblyFormat = [{
    `consumers` `(` $consumer_threads `threads` `,` $consumer_registers
    `registers` `)` $consumers `producer` `(` $producer_registers
    `registers` `)` $producer attr-dict
  }];
  let hasVerifier = 1;
}

def AttnNV_WorkTileOp : AttnNV_Op<"work_tile", [Pure]> {
  let summary = "the (batch, head, tile) of a persistent CTA's work tile";
  let description = [{
    The coordinates of work tile `index` of the grid `(batches, heads,
    tiles)` of the enclosing `attn.tile_grid`, in the order a non-persistent
    launch would start its CTAs: `index` stands for the CTA's place in that
    launch (x fastest, then y, z), renumbered as the kernel's `attn.config`
    renumbers blockIdx (`grid_group_ctas`, `reverse_grid`), except that
    below 32 query tiles the group order gives way to the query tile
    fastest: a persistent causal grid is grouped so that its order runs
    longest first across heads, which rounds of mirrored order
    (`attn-nv-persist`) balance; with few query tiles a round spans whole
    heads and balances without it, while a head's K/V stays in L2.
    `index` must be below batches · heads · tiles.

    Example:
    ```mlir
    %b, %h, %t = attn_nv.work_tile %w of (%B, %H, %T)
    ```
  }];
  let arguments = (ins Index:$index, Index:$batches, Index:$heads,
                       Index:$tiles);
  let results = (outs Index:$batch, Index:$head, Index:$tile);
  let assemblyFormat = [{
    $index `of` ` ` `(` $batches `,` $heads `,` $tiles `)` attr-dict
  }];
  let hasVerifier = 1;
}

def AttnNV_YieldOp : AttnNV_Op<"yield", [
    Pure, Terminator, ReturnLike,
    ParentOneOf<["WarpgroupTurnOp", "WarpSpecializeOp"]>]> {
  let summary = "the results of an attn_nv.warpgroup_turn body (none: the end of a warp_specialize region)";
  let description = [{
    Example:
    ```mlir
    attn_nv.yield %s : tensor<128x128xf32, #attn_nv.acc<warps = 8>>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def AttnNV_WarpAnyOp : AttnNV_Op<"warp_any", [Pure]> {
  let summary = "whether any element of a row tile held by this warp is true";
  let description = [{
    `vote.any` over the elements of an `#attn_nv.rows` i1 tile that the
    threads of this warp hold: the same value in every thread of a warp, but
    it may differ between warps. A branch on it is warp-uniform, and skips
    work only for rows this warp owns.

    Example:
    ```mlir
    %moved = attn_nv.warp_any %changed : tensor<128xi1, #attn_nv.rows<warps = 4>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tile);
  let results = (outs I1:$result);
  let assemblyFormat = "$tile attr-dict `:` type($tile)";
  let hasVerifier = 1;
}

#endif // ATTN_DIALECT_ATTNNV_IR_ATTNNV_TD
