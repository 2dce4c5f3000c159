//===- TestUtil.cpp - Helpers for the runtime unit tests ------------------===//

#include "TestUtil.h"
#include "FakeCudaDriver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <ftw.h>
#include <sstream>
#include <unistd.h>

namespace attn::testing {

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/attn-rt-test-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    ADD_FAILURE() << "mkdtemp failed: " << std::strerror(errno);
  path_ = pattern;
}

TempDir::~TempDir() {
  if (path_.empty())
    return;
  // Restore permissions a test may have removed, then delete depth-first.
  ::nftw(
      path_.c_str(),
      [](const char *path, const struct stat *, int type, struct FTW *) {
        if (type == FTW_D || type == FTW_DNR)
          ::chmod(path, 0700);
        return 0;
      },
      16, FTW_PHYS);
  ::nftw(
      path_.c_str(),
      [](const char *path, const struct stat *, int, struct FTW *) {
        return ::remove(path);
      },
      16, FTW_DEPTH | FTW_PHYS);
}

std::vector<std::string> TempDir::files() const { return listFiles(path_); }

std::vector<std::string> listFiles(const std::string &directory) {
  std::vector<std::string> names;
  if (DIR *dir = ::opendir(directory.c_str())) {
    while (struct dirent *entry = ::readdir(dir))
      if (entry->d_name[0] != '.')
        names.emplace_back(entry->d_name);
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

ScopedEnv::ScopedEnv(std::string name, std::optional<std::string> value)
    : name_(std::move(name)) {
  if (const char *old = std::getenv(name_.c_str()))
    saved_ = old;
  if (value)
    ::setenv(name_.c_str(), value->c_str(), 1);
  else
    ::unsetenv(name_.c_str());
}

ScopedEnv::~ScopedEnv() {
  if (saved_)
    ::setenv(name_.c_str(), saved_->c_str(), 1);
  else
    ::unsetenv(name_.c_str());
}

StderrCapture::StderrCapture() {
  char pattern[] = "/tmp/attn-rt-stderr-XXXXXX";
  int fd = ::mkstemp(pattern);
  path_ = pattern;
  ::fflush(stderr);
  savedFd_ = ::dup(STDERR_FILENO);
  ::dup2(fd, STDERR_FILENO);
  ::close(fd);
}

std::string StderrCapture::finish() {
  if (!text_) {
    ::fflush(stderr);
    ::dup2(savedFd_, STDERR_FILENO);
    ::close(savedFd_);
    text_ = readFile(path_);
    ::unlink(path_.c_str());
  }
  return *text_;
}

StderrCapture::~StderrCapture() { finish(); }

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeFile(const std::string &path, const std::string &data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

void Buffer::Free::operator()(void *p) const { std::free(p); }

Buffer::Buffer(size_t bytes, unsigned char fill)
    : storage_(std::aligned_alloc(64, std::max<size_t>(64, (bytes + 63) / 64 * 64))),
      bytes_(bytes) {
  std::memset(storage_.get(), fill, bytes_);
}

bool Buffer::untouched(unsigned char fill) const {
  auto *bytes = static_cast<const unsigned char *>(storage_.get());
  return std::all_of(bytes, bytes + bytes_,
                     [&](unsigned char b) { return b == fill; });
}

ForwardFixture::ForwardFixture(attn_device device, attn_dtype dtype,
                               int64_t batch, int64_t heads, int64_t seqlenQ,
                               int64_t seqlenK, int64_t headDim, bool withLse,
                               int64_t kvHeads) {
  size_t element = dtype == ATTN_DTYPE_F32 ? 4 : 2;
  size_t qBytes = size_t(batch * heads * seqlenQ * headDim) * element;
  size_t kBytes =
      size_t(batch * (kvHeads ? kvHeads : heads) * seqlenK * headDim) * element;
  q = std::make_unique<Buffer>(qBytes, 0);
  k = std::make_unique<Buffer>(kBytes, 0);
  v = std::make_unique<Buffer>(kBytes, 0);
  o = std::make_unique<Buffer>(qBytes);
  lse = std::make_unique<Buffer>(size_t(batch * heads * seqlenQ) * 4);
  args.q = q->data();
  args.k = k->data();
  args.v = v->data();
  args.o = o->data();
  args.lse = withLse ? static_cast<float *>(lse->data()) : nullptr;
  args.batch = batch;
  args.heads = heads;
  args.kv_heads = kvHeads;
  args.seqlen_q = seqlenQ;
  args.seqlen_k = seqlenK;
  args.head_dim = headDim;
  args.dtype = dtype;
  args.device = device;
  attn_set_bhnd_strides(&args);
  if (device == ATTN_DEVICE_CUDA)
    for (Buffer *buffer : {q.get(), k.get(), v.get(), o.get(), lse.get()})
      registerFakeMemory(buffer->data(), std::max<size_t>(buffer->size(), 1));
}

/// The backward of `call`'s forward, its gradients (dO, dQ, dK, dV) in
/// `grads`' buffers.
attn_bwd_args backwardArgs(const ForwardFixture &call,
                           const ForwardFixture &grads) {
  attn_bwd_args args{};
  args.fwd = call.args;
  args.d_o = grads.args.q;
  args.dq = grads.args.o;
  args.dk = const_cast<void *>(grads.args.k);
  args.dv = const_cast<void *>(grads.args.v);
  attn_set_bwd_strides_like_fwd(&args);
  return args;
}

} // namespace attn::testing
