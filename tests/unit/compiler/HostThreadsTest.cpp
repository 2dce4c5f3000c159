//===- HostThreadsTest.cpp - host kernels give one answer on any threads --===//
//
// compileHost's kernels run their work items (abi::kHostGridsAttr) on the
// caller and a thread pool: the outputs must be bitwise those of one thread,
// for the forward (unmasked, causal, grouped-query, packed GQA decoding) and
// the backward, whose second grid reads what the first wrote. Every output
// is poisoned with NaN first, so an item no thread ran shows up.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/Compiler.h"

#include "llvm/Support/ThreadPool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace attn::compiler;

namespace {

struct Case {
  MaskKind mask;
  int64_t heads, kvHeads, nq, nk;
  bool packGqa, backward;
};

constexpr int64_t kBatch = 2, kHeadDim = 32, kBlock = 32;
/// More threads than this machine may have: items outnumber them.
constexpr unsigned kThreads = 4;

struct Tensors {
  std::vector<float> q, k, v, o, lse, dO, dq, dk, dv;
};

void setStrides(int64_t *s, int64_t heads, int64_t n) {
  s[0] = heads * n * kHeadDim, s[1] = n * kHeadDim, s[2] = kHeadDim, s[3] = 1;
}

/// Runs `kernel` on fresh copies of the inputs; returns every output.
Tensors run(HostKernel &kernel, const Case &c, const Tensors &inputs,
            llvm::ThreadPoolInterface *pool) {
  Tensors t = inputs;
  float nan = std::numeric_limits<float>::quiet_NaN();
  for (auto *out : c.backward ? std::vector<std::vector<float> *>{&t.dq, &t.dk, &t.dv}
                              : std::vector<std::vector<float> *>{&t.o, &t.lse})
    std::fill(out->begin(), out->end(), nan);
  HostArgs a;
  a.q = t.q.data(), a.k = t.k.data(), a.v = t.v.data(), a.o = t.o.data();
  a.lse = t.lse.data();
  a.batch = kBatch, a.heads = c.heads, a.kvHeads = c.kvHeads;
  a.numQueries = c.nq, a.numKeys = c.nk;
  setStrides(a.qStrides, c.heads, c.nq);
  setStrides(a.oStrides, c.heads, c.nq);
  setStrides(a.kStrides, c.kvHeads, c.nk);
  setStrides(a.vStrides, c.kvHeads, c.nk);
  a.lseStrides[0] = c.heads * c.nq, a.lseStrides[1] = c.nq,
  a.lseStrides[2] = 1;
  a.dO = t.dO.data(), a.dq = t.dq.data(), a.dk = t.dk.data(),
  a.dv = t.dv.data();
  std::memcpy(a.dOStrides, a.qStrides, sizeof(a.qStrides));
  std::memcpy(a.dqStrides, a.qStrides, sizeof(a.qStrides));
  std::memcpy(a.dkStrides, a.kStrides, sizeof(a.kStrides));
  std::memcpy(a.dvStrides, a.vStrides, sizeof(a.vStrides));
  a.pool = pool;
  kernel.run(a);
  return t;
}

class HostThreadsTest : public ::testing::TestWithParam<Case> {};

TEST_P(HostThreadsTest, OneThreadAndManyAgreeBitwise) {
  const Case &c = GetParam();
  KernelConfig config;
  config.headDim = kHeadDim;
  config.dtype = DType::F32;
  config.mask = c.mask;
  config.blockM = config.blockN = kBlock;
  config.packGqa = c.packGqa;
  config.backward = c.backward;
  std::string error;
  std::unique_ptr<HostKernel> kernel = compileHost(config, error);
  ASSERT_TRUE(kernel) << error;

  std::mt19937 gen(7);
  std::normal_distribution<float> normal;
  auto random = [&](int64_t heads, int64_t n) {
    std::vector<float> v(size_t(kBatch * heads * n * kHeadDim));
    for (float &x : v)
      x = normal(gen);
    return v;
  };
  Tensors in;
  in.q = random(c.heads, c.nq), in.dO = random(c.heads, c.nq);
  in.k = random(c.kvHeads, c.nk), in.v = random(c.kvHeads, c.nk);
  in.o.resize(in.q.size()), in.dq.resize(in.q.size());
  in.dk.resize(in.k.size()), in.dv.resize(in.k.size());
  in.lse.resize(size_t(kBatch * c.heads * c.nq));
  std::unique_ptr<HostKernel> forward;
  if (c.backward) { // the forward's O and LSE, which the backward reads
    KernelConfig forwardConfig = config;
    forwardConfig.backward = false;
    forward = compileHost(forwardConfig, error);
    ASSERT_TRUE(forward) << error;
    Case forwardCase = c;
    forwardCase.backward = false;
    in = run(*forward, forwardCase, in, nullptr);
  }

  Tensors one = run(*kernel, c, in, nullptr);
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(kThreads - 1));
  Tensors many = run(*kernel, c, in, &pool);
  auto outputs = [&](Tensors &t) {
    return c.backward ? std::vector<std::vector<float> *>{&t.dq, &t.dk, &t.dv}
                      : std::vector<std::vector<float> *>{&t.o, &t.lse};
  };
  std::vector<std::vector<float> *> a = outputs(one), b = outputs(many);
  for (size_t i = 0; i < a.size(); ++i) {
    size_t unwritten = 0;
    for (float x : *b[i])
      unwritten += std::isnan(x);
    EXPECT_EQ(unwritten, 0u) << "output " << i << " has unwritten entries";
    EXPECT_EQ(std::memcmp(a[i]->data(), b[i]->data(),
                          a[i]->size() * sizeof(float)),
              0)
        << "output " << i << " differs between 1 and " << kThreads
        << " threads";
  }
}

// Lengths over several tiles and not multiples of one.
INSTANTIATE_TEST_SUITE_P(
    Grids, HostThreadsTest,
    ::testing::Values(Case{MaskKind::None, 4, 4, 200, 150, false, false},
                      Case{MaskKind::Causal, 4, 2, 200, 200, false, false},
                      Case{MaskKind::None, 8, 2, 1, 300, true, false},
                      Case{MaskKind::Causal, 4, 2, 130, 170, false, true}),
    [](const ::testing::TestParamInfo<Case> &info) {
      const Case &c = info.param;
      return std::string(c.backward ? "Backward" : "Forward") +
             (c.mask == MaskKind::Causal ? "Causal" : "") +
             (c.packGqa ? "PackedGqa" : "") + "H" + std::to_string(c.heads) +
             "Hkv" + std::to_string(c.kvHeads);
    });

} // namespace
