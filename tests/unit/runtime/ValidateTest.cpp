//===- ValidateTest.cpp - Every class of bad input is refused -------------===//
//
// Each test breaks one thing in an otherwise valid call and checks the
// status, that the message names the problem, and that nothing was
// compiled, launched or written.
//
//===----------------------------------------------------------------------===//

#include "Engine.h"
#include "FakeCompiler.h"
#include "FakeCudaDriver.h"
#include "TestUtil.h"
#include "Validate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace attn;
using namespace attn::rt;
using namespace attn::testing;

namespace {

class ValidateTest : public ::testing::Test {
protected:
  void SetUp() override {
    resetFakeCompiler();
    resetFakeCuda();
    EngineOptions options;
    options.driver = makeFakeCudaDriver();
    options.disk.enabled = false;
    engine = std::make_unique<Engine>(options);
  }

  static ForwardFixture cuda() {
    return ForwardFixture(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 2, 4, 96, 80, 64);
  }
  static ForwardFixture host() {
    return ForwardFixture(ATTN_DEVICE_HOST, ATTN_DTYPE_F32, 2, 3, 17, 9, 20);
  }

  void expectRejected(ForwardFixture &call, attn_status code,
                      const std::string &needle) {
    Status status = engine->forward(&call.args);
    EXPECT_EQ(status.code(), code) << status.toString();
    EXPECT_NE(status.message().find(needle), std::string::npos)
        << "message: " << status.message() << "\nexpected: " << needle;
    EXPECT_TRUE(call.o->untouched()) << "o was written";
    EXPECT_TRUE(call.lse->untouched()) << "lse was written";
    EXPECT_EQ(fakeCuda().launches, 0);
    EXPECT_EQ(fakeCompiler().ptxCompiles + fakeCompiler().hostCompiles, 0);
    EXPECT_EQ(engine->stats().launches, 0u);
  }

  std::unique_ptr<Engine> engine;
};

TEST_F(ValidateTest, ValidCallsPass) {
  // The fixtures are valid, so each failure below is due to its one change.
  ForwardFixture gpu = cuda();
  ASSERT_TRUE(engine->forward(&gpu.args).ok());
  ForwardFixture cpu = host();
  ASSERT_TRUE(engine->forward(&cpu.args).ok());
  EXPECT_EQ(engine->stats().launches, 2u);
  EXPECT_FALSE(cpu.o->untouched());
}

TEST_F(ValidateTest, NullArguments) {
  Status status = engine->forward(nullptr);
  EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("args"), std::string::npos);
}

TEST_F(ValidateTest, NullTensorPointers) {
  for (const char *name : {"q", "k", "v", "o"}) {
    ForwardFixture call = cuda();
    const void **slots[] = {&call.args.q, &call.args.k, &call.args.v,
                            const_cast<const void **>(&call.args.o)};
    *slots[std::string("qkvo").find(name[0])] = nullptr;
    expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT,
                   std::string(name) + " is a null pointer");
  }
}

TEST_F(ValidateTest, MisalignedPointers) {
  ForwardFixture call = cuda();
  call.args.k = static_cast<const char *>(call.args.k) + 8;
  expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT, "is not 16-byte aligned");
  ForwardFixture lse = cuda();
  lse.args.lse = reinterpret_cast<float *>(
      reinterpret_cast<char *>(lse.args.lse) + 2);
  expectRejected(lse, ATTN_ERROR_INVALID_ARGUMENT, "lse");
  ForwardFixture cpu = host();
  cpu.args.q = static_cast<const char *>(cpu.args.q) + 2;
  expectRejected(cpu, ATTN_ERROR_INVALID_ARGUMENT, "is not 4-byte aligned");
}

TEST_F(ValidateTest, HostMemoryOnCuda) {
  ForwardFixture call = cuda();
  Buffer plain(call.q->size(), 0); // not registered: unknown to the driver
  call.args.q = plain.data();
  expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT, "q = ");
  expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT, "is not CUDA memory");
  ForwardFixture pinned = cuda();
  Buffer page(pinned.o->size());
  registerFakeMemory(page.data(), page.size(), CU_MEMORYTYPE_HOST);
  pinned.args.v = page.data();
  expectRejected(pinned, ATTN_ERROR_INVALID_ARGUMENT, "page-locked host");
}

TEST_F(ValidateTest, Dtypes) {
  ForwardFixture f32 = cuda();
  f32.args.dtype = ATTN_DTYPE_F32;
  expectRejected(f32, ATTN_ERROR_UNSUPPORTED, "f32 is supported on the host");
  ForwardFixture bogus = cuda();
  setRawEnum(bogus.args.dtype, 7);
  expectRejected(bogus, ATTN_ERROR_INVALID_ARGUMENT, "dtype = 7");
}

TEST_F(ValidateTest, MaskAndDeviceOutOfRange) {
  ForwardFixture mask = cuda();
  setRawEnum(mask.args.mask, 3);
  expectRejected(mask, ATTN_ERROR_INVALID_ARGUMENT, "mask = 3");
  ForwardFixture device = cuda();
  setRawEnum(device.args.device, 2);
  expectRejected(device, ATTN_ERROR_INVALID_ARGUMENT, "device = 2");
}

TEST_F(ValidateTest, NegativeSizes) {
  for (int field = 0; field < 5; ++field) {
    ForwardFixture call = cuda();
    int64_t *sizes[] = {&call.args.batch, &call.args.heads,
                        &call.args.kv_heads, &call.args.seqlen_q,
                        &call.args.seqlen_k};
    const char *names[] = {"batch", "heads", "kv_heads", "seqlen_q",
                           "seqlen_k"};
    *sizes[field] = -1;
    expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT,
                   std::string(names[field]) + " = -1");
  }
}

TEST_F(ValidateTest, HeadDims) {
  ForwardFixture zero = cuda();
  zero.args.head_dim = 0;
  expectRejected(zero, ATTN_ERROR_INVALID_ARGUMENT, "head_dim = 0");
  for (int64_t dim : {4, 12, 100, 264}) {
    ForwardFixture call = cuda();
    call.args.head_dim = dim;
    expectRejected(call, ATTN_ERROR_UNSUPPORTED,
                   "head_dim = " + std::to_string(dim) + " is not supported");
  }
  ForwardFixture cpu = host();
  cpu.args.head_dim = 513;
  expectRejected(cpu, ATTN_ERROR_UNSUPPORTED, "head_dim = 513");
}

TEST_F(ValidateTest, KvHeadsThatDivideHeadsAreValid) {
  // The fixture has 4 query heads: 0 (= 4), 1 (MQA), 2 and 4 divide them.
  for (int64_t kvHeads : {0, 1, 2, 4}) {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 2, 4, 96, 80, 64,
                        true, kvHeads);
    Status status = engine->forward(&call.args);
    EXPECT_TRUE(status.ok()) << kvHeads << ": " << status.toString();
  }
}

TEST_F(ValidateTest, KvHeadsThatDoNotDivideHeads) {
  for (int64_t kvHeads : {3, 5, 8}) {
    ForwardFixture call = cuda(); // 4 heads
    call.args.kv_heads = kvHeads;
    expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT,
                   "kv_heads = " + std::to_string(kvHeads) +
                       " with heads = 4: kv_heads must divide heads");
  }
  ForwardFixture cpu = host(); // 3 heads
  cpu.args.kv_heads = 2;
  expectRejected(cpu, ATTN_ERROR_INVALID_ARGUMENT,
                 "kv_heads = 2 with heads = 3");
}

TEST_F(ValidateTest, KvExtentsUseKvHeads) {
  // With one K/V head, K's head stride never multiplies a head index, so a
  // huge one is harmless; with as many K/V heads as query heads it
  // overflows 64-bit offsets.
  ForwardFixture all = host();
  all.args.k_strides[1] = int64_t(1) << 62;
  expectRejected(all, ATTN_ERROR_INVALID_ARGUMENT,
                 "k: sizes times strides overflow");
  ForwardFixture one(ATTN_DEVICE_HOST, ATTN_DTYPE_F32, 2, 3, 17, 9, 20, true,
                     1);
  one.args.k_strides[1] = int64_t(1) << 62;
  Status status = engine->forward(&one.args);
  EXPECT_TRUE(status.ok()) << status.toString();
}

TEST_F(ValidateTest, GridLimits) {
  ForwardFixture heads = cuda();
  heads.args.heads = 65536;
  expectRejected(heads, ATTN_ERROR_UNSUPPORTED, "at most 65535");
  ForwardFixture batch = cuda();
  batch.args.batch = 70000;
  expectRejected(batch, ATTN_ERROR_UNSUPPORTED, "at most 65535");
}

TEST_F(ValidateTest, InnermostStride) {
  ForwardFixture call = cuda();
  call.args.q_strides[3] = 2;
  expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT,
                 "q_strides[3] = 2: the innermost stride must be 1");
  ForwardFixture lse = cuda();
  lse.args.lse_strides[2] = -1;
  expectRejected(lse, ATTN_ERROR_INVALID_ARGUMENT,
                 "lse_strides[2] = -1: strides must not be negative");
}

TEST_F(ValidateTest, TileSizes) {
  ForwardFixture negative = cuda();
  negative.args.block_n = -16;
  expectRejected(negative, ATTN_ERROR_INVALID_ARGUMENT,
                 "tile sizes must be in [0, 1024]");
  ForwardFixture rows = cuda();
  rows.args.block_m = 48;
  expectRejected(rows, ATTN_ERROR_UNSUPPORTED,
                 "block_m must be a multiple of 64");
  ForwardFixture keys = cuda();
  keys.args.block_n = 40;
  expectRejected(keys, ATTN_ERROR_UNSUPPORTED, "block_n a multiple of 16");
}

TEST_F(ValidateTest, HugeRowStride) {
  ForwardFixture call = cuda();
  call.args.k_strides[2] = int64_t(1) << 22;
  expectRejected(call, ATTN_ERROR_UNSUPPORTED,
                 "k_strides[2] = 4194304: on CUDA the sequence stride must be "
                 "below");
}

TEST_F(ValidateTest, LseInAnyLayout) {
  // (B, Nq, H) storage of the LSE, as next to a (B, N, H, D) output: the
  // kernel writes it one f32 at a time, so no unit stride is needed.
  ForwardFixture call = cuda();
  int64_t heads = call.args.heads, seqlen = call.args.seqlen_q;
  call.args.lse_strides[0] = seqlen * heads;
  call.args.lse_strides[1] = 1;
  call.args.lse_strides[2] = heads;
  Status status = engine->forward(&call.args);
  EXPECT_TRUE(status.ok()) << status.toString();
}

TEST_F(ValidateTest, NegativeStride) {
  ForwardFixture call = cuda();
  call.args.k_strides[1] = -8;
  expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT,
                 "k_strides[1] = -8: strides must not be negative");
}

TEST_F(ValidateTest, StridesNotMultipleOfEight) {
  ForwardFixture call = cuda();
  call.args.v_strides[2] = 68;
  expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT,
                 "v_strides[2] = 68: on CUDA, strides must be multiples of 8");
}

TEST_F(ValidateTest, OffsetOverflow) {
  // On the host (on CUDA the sequence-stride limit answers first).
  ForwardFixture call = host();
  call.args.seqlen_q = int64_t(1) << 40;
  call.args.q_strides[2] = int64_t(1) << 30;
  expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT, "overflow");
}

TEST_F(ValidateTest, OverlappingOutputs) {
  ForwardFixture o = cuda();
  o.args.o_strides[1] = 0; // every head writes the same rows
  expectRejected(o, ATTN_ERROR_INVALID_ARGUMENT, "o: its strides make");
  ForwardFixture lse = cuda();
  lse.args.lse_strides[0] = 1;
  expectRejected(lse, ATTN_ERROR_INVALID_ARGUMENT, "lse: its strides make");
}

// Outputs that share memory with an input or another output gave ATTN_OK
// and wrong results (issue 14): each is refused from the tensors' extents.
TEST_F(ValidateTest, OutputsOverlappingOutputs) {
  // The LSE inside O.
  ForwardFixture lse = host();
  lse.args.lse = static_cast<float *>(lse.args.o) + 8;
  expectRejected(lse, ATTN_ERROR_INVALID_ARGUMENT, "outputs o [");
}

TEST_F(ValidateTest, OutputsOverlappingInputs) {
  // Nq = Nk and H = Hkv: Q, K, V and O have one size, so an output placed on
  // an input covers that input only, never memory past its buffer.
  auto sameSizes = [] {
    return ForwardFixture(ATTN_DEVICE_HOST, ATTN_DTYPE_F32, 2, 3, 17, 17, 20);
  };
  struct Case {
    const char *input;
    const void *(*alias)(const attn_fwd_args &);
  } cases[] = {
      {"input k", [](const attn_fwd_args &a) { return a.k; }},
      {"input v", [](const attn_fwd_args &a) { return a.v; }},
      // In place, O = Q exactly: refused as well (attn_jit.h says why).
      {"input q", [](const attn_fwd_args &a) { return a.q; }},
  };
  for (const Case &c : cases) {
    ForwardFixture call = sameSizes();
    call.args.o = const_cast<void *>(c.alias(call.args));
    expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT,
                   std::string("overlaps ") + c.input);
  }
  // O one row into Q, both inside one buffer.
  ForwardFixture shifted = sameSizes();
  Buffer arena(2 * shifted.q->size(), 0);
  shifted.args.q = arena.data();
  shifted.args.o = static_cast<float *>(arena.data()) + shifted.args.head_dim;
  expectRejected(shifted, ATTN_ERROR_INVALID_ARGUMENT, "overlaps input q");
  // The LSE inside V.
  ForwardFixture lse = sameSizes();
  lse.args.lse = static_cast<float *>(const_cast<void *>(lse.args.v));
  expectRejected(lse, ATTN_ERROR_INVALID_ARGUMENT, "output lse [");
}

TEST_F(ValidateTest, OutputsOverlappingVariantTensors) {
  ForwardFixture call = host();
  call.args.variant.flags = ATTN_VARIANT_BIAS;
  call.args.variant.bias = static_cast<const float *>(call.args.o);
  call.args.variant.bias_strides[0] = call.args.seqlen_k;
  call.args.variant.bias_strides[1] = 1;
  expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT, "overlaps input bias");
}

TEST_F(ValidateTest, InputsMayShareMemory) {
  // Only outputs need memory of their own: K = V is fine.
  ForwardFixture call = host();
  call.args.v = call.args.k;
  EXPECT_TRUE(validateForward(&call.args).ok());
  // Q and O back to back in one buffer: touching, not overlapping.
  ForwardFixture adjacent = host();
  Buffer both(2 * adjacent.q->size());
  adjacent.args.q = both.data();
  adjacent.args.o = static_cast<unsigned char *>(both.data()) +
                    adjacent.q->size();
  EXPECT_TRUE(validateForward(&adjacent.args).ok());
}

TEST_F(ValidateTest, OutputsOverlappingUserCaptures) {
  // A user's mods with a (Nq, Nk) f32 table: valid apart, refused over O.
  ForwardFixture call = host();
  std::vector<float> table(call.args.seqlen_q * call.args.seqlen_k);
  attn_capture captures[2] = {};
  captures[1].data = table.data();
  captures[1].sizes[0] = call.args.seqlen_q;
  captures[1].sizes[1] = call.args.seqlen_k;
  captures[1].strides[0] = call.args.seqlen_k;
  captures[1].strides[1] = 1;
  call.args.variant.mods = kFakeUserModsWithTable;
  call.args.variant.captures = captures;
  call.args.variant.num_captures = 2;
  ForwardFixture inO = host();
  inO.args.variant = call.args.variant;
  attn_capture overO[2] = {captures[0], captures[1]};
  overO[1].data = inO.args.o;
  inO.args.variant.captures = overO;
  expectRejected(inO, ATTN_ERROR_INVALID_ARGUMENT,
                 "overlaps input captures[1]");
  EXPECT_TRUE(engine->forward(&call.args).ok());
}

/// A valid host backward call over a ForwardFixture's tensors.
struct BackwardFixture {
  ForwardFixture fwd{ATTN_DEVICE_HOST, ATTN_DTYPE_F32, 2, 3, 17, 9, 20};
  Buffer dO{fwd.q->size()}, dq{fwd.q->size()}, dk{fwd.k->size()},
      dv{fwd.v->size()};
  attn_bwd_args args{};
  BackwardFixture() {
    args.fwd = fwd.args;
    args.d_o = dO.data();
    args.dq = dq.data();
    args.dk = dk.data();
    args.dv = dv.data();
    attn_set_bwd_strides_like_fwd(&args);
  }
};

TEST_F(ValidateTest, BackwardOutputsOverlapping) {
  BackwardFixture valid;
  EXPECT_TRUE(validateBackward(&valid.args).ok());
  struct Case {
    const char *needle;
    void (*alias)(attn_bwd_args &);
  } cases[] = {
      {"outputs dq [", [](attn_bwd_args &a) { a.dk = a.dq; }},
      {"outputs dk [", [](attn_bwd_args &a) { a.dv = a.dk; }},
      {"overlaps input q", [](attn_bwd_args &a) { a.dq = const_cast<void *>(a.fwd.q); }},
      {"overlaps input v", [](attn_bwd_args &a) { a.dk = const_cast<void *>(a.fwd.v); }},
      {"overlaps input o", [](attn_bwd_args &a) { a.dv = a.fwd.o; }},
      // The LSE (B * H * Nq floats) inside dQ.
      {"overlaps input lse", [](attn_bwd_args &a) {
         a.fwd.lse = static_cast<float *>(a.dq);
       }},
      {"overlaps input d_o", [](attn_bwd_args &a) { a.dq = const_cast<void *>(a.d_o); }},
  };
  for (const Case &c : cases) {
    BackwardFixture call;
    c.alias(call.args);
    Status status = validateBackward(&call.args);
    EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT) << c.needle;
    EXPECT_NE(status.message().find(c.needle), std::string::npos)
        << "message: " << status.message() << "\nexpected: " << c.needle;
  }
}

TEST_F(ValidateTest, GradientsOverlappingUserCaptures) {
  BackwardFixture call;
  attn_capture captures[2] = {};
  captures[1].data = call.args.dk; // dK is written, the table read
  captures[1].sizes[0] = call.args.fwd.seqlen_q;
  captures[1].sizes[1] = call.args.fwd.seqlen_k;
  captures[1].strides[0] = call.args.fwd.seqlen_k;
  captures[1].strides[1] = 1;
  call.args.fwd.variant.mods = kFakeUserModsWithTable;
  call.args.fwd.variant.captures = captures;
  call.args.fwd.variant.num_captures = 2;
  Status status = engine->backward(&call.args);
  EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT) << status.toString();
  EXPECT_NE(status.message().find("output dk ["), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("overlaps input captures[1]"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(fakeCompiler().hostCompiles, 0);
}

TEST_F(ValidateTest, BadScale) {
  for (float scale : {std::numeric_limits<float>::quiet_NaN(),
                      std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity()}) {
    ForwardFixture call = cuda();
    call.args.scale = scale;
    expectRejected(call, ATTN_ERROR_INVALID_ARGUMENT, "must be finite");
  }
}

TEST_F(ValidateTest, NegativeScalesAreValid) {
  for (float scale : {-1.0f, -0.125f, -std::numeric_limits<float>::max()}) {
    ForwardFixture call = cuda();
    call.args.scale = scale;
    Status status = engine->forward(&call.args);
    EXPECT_TRUE(status.ok()) << scale << ": " << status.toString();
  }
}

TEST_F(ValidateTest, EmptyCallsReturnWithoutLaunching) {
  for (int field = 0; field < 3; ++field) {
    ForwardFixture call = cuda();
    int64_t *sizes[] = {&call.args.batch, &call.args.heads,
                        &call.args.seqlen_q};
    *sizes[field] = 0;
    call.args.q = call.args.k = call.args.v = nullptr; // as empty tensors
    call.args.o = nullptr;
    Status status = engine->forward(&call.args);
    EXPECT_TRUE(status.ok()) << status.toString();
  }
  EXPECT_EQ(fakeCuda().launches, 0);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 0);
}

TEST_F(ValidateTest, NoKeysStillLaunches) {
  // Nk = 0 is valid: the kernel writes O = 0 and LSE = -inf; K and V may
  // be null then.
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_F16, 1, 2, 32, 0, 64);
  call.args.k = call.args.v = nullptr;
  Status status = engine->forward(&call.args);
  ASSERT_TRUE(status.ok()) << status.toString();
  EXPECT_EQ(fakeCuda().launches, 1);
}

} // namespace
