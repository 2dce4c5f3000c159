//===- SplitKv.cpp - How many splits a forward call runs, its workspace ---===//

#include "SplitKv.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <initializer_list>
#include <iterator>
#include <string_view>

namespace attn::rt {

int64_t chooseNumSplits(int64_t ctas, int64_t keyTiles, int64_t slots) {
  if (ctas <= 0 || slots <= 0 || double(ctas) >= kFillsGpu * double(slots))
    return 1;
  int64_t most = std::min({kMaxSplits, slots, keyTiles});
  auto makespan = [&](int64_t splits) {
    return llvm::divideCeilSigned(ctas * splits, slots) *
           (llvm::divideCeilSigned(keyTiles, splits) + kSplitOverheadTiles);
  };
  int64_t best = 1;
  for (int64_t s = 2; s <= most; ++s)
    if (makespan(s) < makespan(best))
      best = s;
  return best;
}

int64_t splitsForCall(int64_t requested, int64_t batch, int64_t ctas,
                      int64_t keyTiles, int64_t slots) {
  int64_t splits =
      requested > 0 ? requested
      : slots > 0
          ? chooseNumSplits(ctas, keyTiles, slots)
          : 1;
  splits = std::min(splits, kMaxSplits);
  if (batch > 0)
    splits = std::min(splits, kMaxGridZ / batch);
  return std::max<int64_t>(splits, 1);
}

size_t SplitCall::workspaceFloats() const {
  return static_cast<size_t>(batchRows * numSplits * heads * rows *
                             (valueDim + 1));
}

std::vector<abi::CaptureValue> SplitCall::values() const {
  static_assert(std::size(abi::kSplitArgs) == 3 &&
                    std::string_view(abi::kSplitArgs[0].name) ==
                        "num_splits" &&
                    abi::kSplitArgs[1].rank == 4 &&
                    abi::kSplitArgs[2].rank == 3,
                "SplitCall::values passes num_splits, o_partial and "
                "lse_partial: update it with KernelABI.h");
  int64_t parts = batchRows * numSplits;
  // Contiguous tensors of the given sizes at `data`.
  auto contiguous = [](float *data, std::initializer_list<int64_t> sizes) {
    abi::CaptureValue c;
    c.data = data;
    int rank = static_cast<int>(sizes.size());
    std::copy(sizes.begin(), sizes.end(), c.sizes);
    int64_t stride = 1;
    for (int i = rank - 1; i >= 0; --i) {
      c.strides[i] = stride;
      stride *= c.sizes[i];
    }
    return c;
  };
  abi::CaptureValue count;
  count.i64 = numSplits;
  abi::CaptureValue out =
      contiguous(workspace, {parts, heads, rows, valueDim});
  abi::CaptureValue lse = contiguous(
      workspace ? workspace + parts * heads * rows * valueDim : nullptr,
      {parts, heads, rows});
  return {count, out, lse};
}

} // namespace attn::rt
