//===- SingleFlight.h - A map whose values are built once -----------------===//
//
// get(key, make): the first caller for a key runs make(); callers that arrive
// while it runs wait for its result instead of building again; later callers
// get the stored value. Different keys build in parallel (make runs without
// the map lock). A failed build is handed to the callers that waited for it
// and then forgotten, so that a later call tries again. A make() that throws
// is a failed build too: every caller gets ATTN_ERROR_INTERNAL with the
// exception's message (the runtime is compiled with exceptions; the compiler
// library is not, but operator new still throws std::bad_alloc through it).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_SINGLEFLIGHT_H
#define ATTN_RUNTIME_SINGLEFLIGHT_H

#include "attn-jit/Runtime.h"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace attn::rt {

template <typename Value> class SingleFlight {
public:
  using Pointer = std::shared_ptr<const Value>;

  enum class Outcome {
    Built,  ///< this caller ran make()
    Joined, ///< waited for another caller's make()
    Cached  ///< the value was already there
  };

  /// `make` returns Expected<Pointer>.
  template <typename Make>
  Expected<Pointer> get(const std::string &key, Make &&make,
                        Outcome *outcome = nullptr) {
    std::shared_ptr<Slot> slot;
    bool builder = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = slots_.find(key);
      if (it == slots_.end()) {
        slot = std::make_shared<Slot>();
        slots_.emplace(key, slot);
        builder = true;
      } else {
        slot = it->second;
      }
    }
    if (!builder) {
      // The common case, a value built long ago, takes no second lock.
      bool wasReady = slot->ready.load(std::memory_order_acquire);
      if (!wasReady) {
        std::unique_lock<std::mutex> lock(slot->mutex);
        slot->done.wait(lock, [&] {
          return slot->ready.load(std::memory_order_acquire);
        });
      }
      if (outcome)
        *outcome = wasReady ? Outcome::Cached : Outcome::Joined;
      if (!slot->value)
        return slot->status;
      return slot->value;
    }

    if (outcome)
      *outcome = Outcome::Built;
    Expected<Pointer> result = build(key, make);
    {
      std::lock_guard<std::mutex> lock(slot->mutex);
      if (result.ok())
        slot->value = *result;
      else
        slot->status = result.status();
      slot->ready.store(true, std::memory_order_release);
    }
    slot->done.notify_all();
    if (!result.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = slots_.find(key);
      if (it != slots_.end() && it->second == slot)
        slots_.erase(it);
    }
    return result;
  }

  /// The value built for `key`, without waiting: null while it is absent,
  /// being built, or failed.
  Pointer ready(const std::string &key) const {
    std::shared_ptr<Slot> slot;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = slots_.find(key);
      if (it == slots_.end())
        return nullptr;
      slot = it->second;
    }
    if (!slot->ready.load(std::memory_order_acquire))
      return nullptr;
    std::lock_guard<std::mutex> lock(slot->mutex);
    return slot->value;
  }

  /// Forgets every value; builds in progress finish for their waiters.
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    slots_.clear();
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return slots_.size();
  }

private:
  /// make(), with an exception turned into a failed build: waiters must be
  /// woken whatever make() does.
  template <typename Make>
  static Expected<Pointer> build(const std::string &key, Make &make) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    try {
      return make();
    } catch (const std::exception &e) {
      return Status(ATTN_ERROR_INTERNAL,
                    "building " + key + " threw an exception: " + e.what());
    } catch (...) {
      return Status(ATTN_ERROR_INTERNAL,
                    "building " + key +
                        " threw an exception that is not a std::exception");
    }
#else
    return make();
#endif
  }

  struct Slot {
    std::mutex mutex;
    std::condition_variable done;
    std::atomic<bool> ready{false};
    Pointer value;
    Status status; // the failure, when value is null
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
};

} // namespace attn::rt

#endif // ATTN_RUNTIME_SINGLEFLIGHT_H
