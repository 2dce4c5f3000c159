//===- TensorMapTest.cpp - K/V tensor maps against the fake driver --------===//
//
// encodeTensorMaps passes cuTensorMapEncodeTiled what KernelABI.h's
// kTensorMaps promise the TMA kernels: 4-D (D, N, Hkv, B) views of K and V
// with the tensors' strides in bytes, a box of block_n rows by 64 columns,
// the 128-byte swizzle and zero fill, O's (D, Nq, H, B) view with a box of
// kTmaStoreRows rows and Q's with block_m rows; layouts TMA cannot describe
// are refused before the driver sees them. A packed batch's K and V maps
// take the ragged form (TensorMapForm), its O and Q maps the tiled one.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaDriver.h"
#include "TensorMap.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace attn;
using namespace attn::rt;
using namespace attn::testing;

namespace {

std::vector<FakeTensorMapEncode> encodeLog() {
  std::lock_guard<std::mutex> lock(fakeCuda().mutex);
  return fakeCuda().tensorMapLog;
}

class TensorMapTest : public ::testing::Test {
protected:
  void SetUp() override { resetFakeCuda(); }
};

TEST_F(TensorMapTest, EncodesKVAndOAsFourDimensionalSwizzledViews) {
  // GQA, (B, N, H, D) layout: K/V strides (N·Hkv·D, D, Hkv·D, 1), O's
  // (Nq·H·D, D, H·D, 1).
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 3, 8, 100, 77, 128,
                      true, /*kvHeads=*/2);
  attn_set_bnhd_strides(&call.args);
  auto driver = makeFakeCudaDriver();
  TensorMaps maps;
  Status status = encodeTensorMaps(*driver, call.args, {128, 64}, maps);
  ASSERT_TRUE(status.ok()) << status.toString();
  std::vector<FakeTensorMapEncode> log = encodeLog();
  ASSERT_EQ(log.size(), 4u);
  const FakeTensorMapEncode &o = log[2];
  EXPECT_EQ(o.result, CUDA_SUCCESS);
  EXPECT_EQ(o.type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(o.address, call.args.o);
  EXPECT_EQ(o.dims, (std::vector<uint64_t>{128, 100, 8, 3}));
  EXPECT_EQ(o.strides,
            (std::vector<uint64_t>{8 * 128 * 2, 128 * 2, 100 * 8 * 128 * 2}));
  EXPECT_EQ(o.box, (std::vector<uint32_t>{64, 16, 1, 1}));
  EXPECT_EQ(o.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  // Q's: the same view of Q, a box of block_m rows.
  const FakeTensorMapEncode &q = log[3];
  EXPECT_EQ(q.address, call.args.q);
  EXPECT_EQ(q.dims, (std::vector<uint64_t>{128, 100, 8, 3}));
  EXPECT_EQ(q.box, (std::vector<uint32_t>{64, 64, 1, 1}));
  const void *data[2] = {call.args.k, call.args.v};
  for (int m = 0; m < 2; ++m) {
    const FakeTensorMapEncode &e = log[m];
    EXPECT_EQ(e.result, CUDA_SUCCESS);
    EXPECT_EQ(e.type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
    EXPECT_EQ(e.rank, 4u);
    EXPECT_EQ(e.address, data[m]);
    EXPECT_EQ(e.dims, (std::vector<uint64_t>{128, 77, 2, 3}));
    EXPECT_EQ(e.strides,
              (std::vector<uint64_t>{2 * 128 * 2, 128 * 2, 77 * 2 * 128 * 2}));
    EXPECT_EQ(e.box, (std::vector<uint32_t>{64, 128, 1, 1}));
    EXPECT_EQ(e.elementStrides, (std::vector<uint32_t>{1, 1, 1, 1}));
    EXPECT_EQ(e.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
    EXPECT_EQ(e.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
    EXPECT_EQ(e.fill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE); // zeros
    uint64_t word;
    std::memcpy(&word, &maps.maps[m], sizeof(word));
    EXPECT_EQ(word, reinterpret_cast<uintptr_t>(data[m]));
  }
}

TEST_F(TensorMapTest, HalfPrecisionAndTheKernelsBlockN) {
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_F16, 1, 2, 16, 300, 256);
  auto driver = makeFakeCudaDriver();
  TensorMaps maps;
  ASSERT_TRUE(encodeTensorMaps(*driver, call.args, {64, 64}, maps).ok());
  std::vector<FakeTensorMapEncode> log = encodeLog();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].type, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(log[2].type, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(log[3].type, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(log[0].box, (std::vector<uint32_t>{64, 64, 1, 1}));
  // Contiguous (B, H, N, D): row stride D, head stride N·D, batch H·N·D.
  EXPECT_EQ(log[1].strides,
            (std::vector<uint64_t>{256 * 2, 300 * 256 * 2, 2 * 300 * 256 * 2}));
}

TEST_F(TensorMapTest, LayoutsTmaCannotDescribeAreRefusedBeforeTheDriver) {
  auto driver = makeFakeCudaDriver();
  TensorMaps maps;
  {
    // D = 8 bf16 rows with a padded row stride of 12 elements: 24 bytes.
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 8);
    call.args.k_strides[2] = 12;
    EXPECT_NE(tensorMapUnsupportedReason(call.args).find("K's stride 12"),
              std::string::npos)
        << tensorMapUnsupportedReason(call.args);
    Status status = encodeTensorMaps(*driver, call.args, {64, 64}, maps);
    EXPECT_EQ(status.code(), ATTN_ERROR_UNSUPPORTED);
  }
  {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 64);
    call.args.v = static_cast<const char *>(call.args.v) + 2;
    EXPECT_NE(tensorMapUnsupportedReason(call.args).find("V's address"),
              std::string::npos);
  }
  {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 64);
    call.args.k_strides[3] = 2;
    EXPECT_NE(tensorMapUnsupportedReason(call.args).find("innermost"),
              std::string::npos);
  }
  {
    // O too: a TMA kernel may store it by its map.
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 64);
    call.args.o_strides[2] = 68;
    EXPECT_NE(tensorMapUnsupportedReason(call.args).find("O's stride 68"),
              std::string::npos)
        << tensorMapUnsupportedReason(call.args);
  }
  EXPECT_TRUE(encodeLog().empty());
}

TEST_F(TensorMapTest, SizeOneDimsTakeDenseStridesAndBroadcastsAreRefused) {
  auto driver = makeFakeCudaDriver();
  TensorMaps maps;
  // B = 1, Hkv = 1 with strides 0 (an expanded tensor): never stepped over.
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 40, 64);
  call.args.k_strides[0] = call.args.k_strides[1] = 0;
  ASSERT_TRUE(encodeTensorMaps(*driver, call.args, {128, 64}, maps).ok());
  std::vector<FakeTensorMapEncode> log = encodeLog();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].strides,
            (std::vector<uint64_t>{64 * 2, 40 * 64 * 2, 40 * 64 * 2}));
  // Two K heads sharing one (stride 0 over a dim of 2) cannot be a map.
  ForwardFixture shared(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 16, 40, 64);
  shared.args.k_strides[1] = 0;
  EXPECT_NE(tensorMapUnsupportedReason(shared.args).find("K's stride 0"),
            std::string::npos)
      << tensorMapUnsupportedReason(shared.args);
}

TEST_F(TensorMapTest, ARepeatedCallReusesItsMaps) {
  // The same inputs on the same thread: the driver encodes once; another
  // K, another driver table or another box encodes again.
  auto driver = makeFakeCudaDriver();
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 2, 4, 16, 300, 128);
  TensorMaps first, again;
  ASSERT_TRUE(encodeTensorMaps(*driver, call.args, {128, 64}, first).ok());
  ASSERT_TRUE(encodeTensorMaps(*driver, call.args, {128, 64}, again).ok());
  EXPECT_EQ(encodeLog().size(), 4u);
  EXPECT_EQ(std::memcmp(&first, &again, sizeof(TensorMaps)), 0);
  ForwardFixture other(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 2, 4, 16, 300, 128);
  call.args.k = other.args.k;
  ASSERT_TRUE(encodeTensorMaps(*driver, call.args, {128, 64}, again).ok());
  EXPECT_EQ(encodeLog().size(), 8u);
  ASSERT_TRUE(encodeTensorMaps(*driver, call.args, {64, 64}, again).ok());
  EXPECT_EQ(encodeLog().size(), 12u);
  auto otherDriver = makeFakeCudaDriver();
  ASSERT_TRUE(encodeTensorMaps(*otherDriver, call.args, {64, 64}, again).ok());
  EXPECT_EQ(encodeLog().size(), 16u);
  // Another O, or Q's box, encodes again too.
  call.args.o = other.args.o;
  ASSERT_TRUE(encodeTensorMaps(*otherDriver, call.args, {64, 64}, again).ok());
  EXPECT_EQ(encodeLog().size(), 20u);
  ASSERT_TRUE(encodeTensorMaps(*otherDriver, call.args, {64, 128}, again).ok());
  EXPECT_EQ(encodeLog().size(), 24u);
}

TEST_F(TensorMapTest, RaggedMapsStepRowsTwiceFromABaseNRowsBack) {
  // A packed batch's view (B = 1, 150 rows of Hkv = 2 heads, D = 64 in the
  // (total, Hkv, D) layout): KernelABI.h's ragged form, (D, N, Hkv, N + 1)
  // with strides (row, head, row) from N rows before K.
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 8, 100, 150, 64,
                      true, /*kvHeads=*/2);
  attn_set_bnhd_strides(&call.args);
  auto driver = makeFakeCudaDriver();
  TensorMaps maps;
  ASSERT_TRUE(encodeTensorMaps(*driver, call.args, {128, 64}, maps,
                               attn::abi::TensorMapForm::Ragged)
                  .ok());
  std::vector<FakeTensorMapEncode> log = encodeLog();
  ASSERT_EQ(log.size(), 4u);
  const uint64_t rowBytes = 2 * 64 * 2;
  const void *data[2] = {call.args.k, call.args.v};
  for (int m = 0; m < 2; ++m) {
    EXPECT_EQ(log[m].dims, (std::vector<uint64_t>{64, 150, 2, 151}));
    EXPECT_EQ(log[m].strides,
              (std::vector<uint64_t>{rowBytes, 64 * 2, rowBytes}));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(log[m].address),
              reinterpret_cast<uintptr_t>(data[m]) - 150 * rowBytes);
    EXPECT_EQ(log[m].box, (std::vector<uint32_t>{64, 128, 1, 1}));
  }
  // O's and Q's maps are tiled: (D, Nq, H, 1) at O and Q.
  EXPECT_EQ(log[2].dims, (std::vector<uint64_t>{64, 100, 8, 1}));
  EXPECT_EQ(log[2].address, call.args.o);
  EXPECT_EQ(log[3].dims, (std::vector<uint64_t>{64, 100, 8, 1}));
  EXPECT_EQ(log[3].address, call.args.q);
  // The tiled maps of the same tensors are other maps: encoded again.
  ASSERT_TRUE(encodeTensorMaps(*driver, call.args, {128, 64}, maps).ok());
  log = encodeLog();
  ASSERT_EQ(log.size(), 8u);
  EXPECT_EQ(log[4].address, call.args.k);
}

TEST_F(TensorMapTest, RaggedMapsViewOneBatchAboveAddressZero) {
  auto driver = makeFakeCudaDriver();
  TensorMaps maps;
  auto ragged = attn::abi::TensorMapForm::Ragged;
  {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 2, 2, 16, 40, 64);
    EXPECT_NE(
        tensorMapUnsupportedReason(call.args, ragged).find("batch of one"),
        std::string::npos)
        << tensorMapUnsupportedReason(call.args, ragged);
    EXPECT_TRUE(tensorMapUnsupportedReason(call.args).empty());
  }
  {
    // K at 1 KiB: its 40 rows of 128 bytes (5 KiB) reach below address 0.
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 40, 64);
    call.args.k = reinterpret_cast<const void *>(uintptr_t(1024));
    EXPECT_NE(tensorMapUnsupportedReason(call.args, ragged).find("K's address"),
              std::string::npos)
        << tensorMapUnsupportedReason(call.args, ragged);
    Status status = encodeTensorMaps(*driver, call.args, {64, 64}, maps, ragged);
    EXPECT_EQ(status.code(), ATTN_ERROR_UNSUPPORTED);
  }
  EXPECT_TRUE(encodeLog().empty());
}

TEST_F(TensorMapTest, ADriverWithoutTheEntryPointHasNoTma) {
  fakeCuda().hasTensorMapEncode = false;
  auto driver = makeFakeCudaDriver();
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 64);
  TensorMaps maps;
  Status status = encodeTensorMaps(*driver, call.args, {64, 64}, maps);
  EXPECT_EQ(status.code(), ATTN_ERROR_UNSUPPORTED);
  EXPECT_NE(status.message().find("cuTensorMapEncodeTiled"), std::string::npos);
}

TEST_F(TensorMapTest, BoxRowsAreBoundedBeforeTheDriver) {
  auto driver = makeFakeCudaDriver();
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 64);
  TensorMaps maps;
  // 300 rows: past the 256 a box side may have.
  Status status = encodeTensorMaps(*driver, call.args, {300, 64}, maps);
  EXPECT_EQ(status.code(), ATTN_ERROR_UNSUPPORTED);
  EXPECT_TRUE(encodeLog().empty());
}

} // namespace
