//===- HotCache.h - A thread's memo of the kernels it launched ------------===//
//
// A cached call must cost little on the host, and most of what the shared
// caches cost (the key's text, a map under a mutex, reference counts that
// every thread writes) is not needed to find a kernel this thread already
// launched. So each thread keeps a few (CallKey -> kernel) entries of its
// own: found by the precomputed hash, no lock, no allocation, nothing
// written that another thread reads. A miss goes to the engine's shared,
// single-flight caches (SingleFlight.h), which stay the one place where
// kernels are built and deduplicated, and then fills an entry here.
//
// Entries belong to an epoch: a number drawn from one process-wide counter
// when an engine is built and again whenever it forgets its kernels
// (attn_clear_memory_cache). An entry of another engine, or of an epoch its
// engine has left, is never found.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HOTCACHE_H
#define ATTN_RUNTIME_HOTCACHE_H

#include "CallKey.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace attn::rt {

/// A new epoch, never handed out before in this process.
inline uint64_t nextHotCacheEpoch() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

/// `Value`: what a hit needs (the engine's HotKernel). Entries are replaced
/// round robin once all are used; a thread that calls more configurations
/// than kEntries in turn still gets every kernel, from the shared caches.
template <typename Value> class HotCache {
public:
  static constexpr size_t kEntries = 16;

  /// The value of `key` stored in `epoch`, or null.
  Value *find(const CallKey &key, uint64_t epoch) {
    for (Entry &entry : entries_)
      if (entry.epoch == epoch && entry.key == key)
        return &entry.value;
    return nullptr;
  }

  /// A value for `key` in `epoch` (the key's old one, if any, is replaced).
  Value &insert(const CallKey &key, uint64_t epoch) {
    Entry *slot = nullptr;
    for (Entry &entry : entries_)
      if (entry.key == key)
        slot = &entry;
    if (!slot) {
      slot = &entries_[next_];
      next_ = (next_ + 1) % kEntries;
    }
    slot->key = key;
    slot->epoch = epoch;
    slot->value = Value();
    return slot->value;
  }

private:
  struct Entry {
    CallKey key;
    uint64_t epoch = 0; // 0: empty (epochs start at 1)
    Value value;
  };
  std::array<Entry, kEntries> entries_;
  size_t next_ = 0;
};

} // namespace attn::rt

#endif // ATTN_RUNTIME_HOTCACHE_H
