//===- TestUtil.h - Helpers for the runtime unit tests --------------------===//

#ifndef ATTN_TESTS_TESTUTIL_H
#define ATTN_TESTS_TESTUTIL_H

#include "attn-jit/attn_jit.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::testing {

/// A fresh directory under $TMPDIR, removed with its contents.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }
  /// Names of the files in the directory, sorted.
  std::vector<std::string> files() const;

private:
  std::string path_;
};

/// Sets (or, with nullopt, unsets) an environment variable for a scope.
class ScopedEnv {
public:
  ScopedEnv(std::string name, std::optional<std::string> value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  std::string name_;
  std::optional<std::string> saved_;
};

/// Captures what is written to stderr (fd 2) in its scope.
class StderrCapture {
public:
  StderrCapture();
  ~StderrCapture();
  /// Stops capturing (once) and returns the text.
  std::string finish();

private:
  int savedFd_ = -1;
  std::string path_;
  std::optional<std::string> text_;
};

/// Stores `value` into an enum field the way a C caller can, including
/// values outside the enum (a static_cast to them would be undefined).
template <typename Enum> void setRawEnum(Enum &field, int value) {
  static_assert(sizeof(Enum) == sizeof(int));
  std::memcpy(&field, &value, sizeof value);
}

/// Names of the files in `directory` (no dot files), sorted.
std::vector<std::string> listFiles(const std::string &directory);
std::string readFile(const std::string &path);
void writeFile(const std::string &path, const std::string &data);

/// 64-byte aligned memory that stands in for device memory in the tests
/// (registerFakeMemory makes the fake driver call it device memory).
class Buffer {
public:
  explicit Buffer(size_t bytes, unsigned char fill = 0xAB);
  void *data() { return storage_.get(); }
  size_t size() const { return bytes_; }
  /// Whether every byte still holds `fill`.
  bool untouched(unsigned char fill = 0xAB) const;

private:
  struct Free {
    void operator()(void *p) const;
  };
  std::unique_ptr<void, Free> storage_;
  size_t bytes_;
};

/// Valid (B, H, N, D) arguments over freshly allocated buffers, registered
/// as fake device memory for ATTN_DEVICE_CUDA; K and V have kvHeads heads
/// (0: heads).
struct ForwardFixture {
  ForwardFixture(attn_device device, attn_dtype dtype, int64_t batch,
                 int64_t heads, int64_t seqlenQ, int64_t seqlenK,
                 int64_t headDim, bool withLse = true, int64_t kvHeads = 0);
  attn_fwd_args args{};
  std::unique_ptr<Buffer> q, k, v, o, lse;
};

/// The backward of `call`'s forward, its gradients (dO, dQ, dK, dV) in
/// `grads`' buffers.
attn_bwd_args backwardArgs(const ForwardFixture &call,
                           const ForwardFixture &grads);

} // namespace attn::testing

#endif // ATTN_TESTS_TESTUTIL_H
