//===- SingleFlightTest.cpp - One build per key, keys in parallel ---------===//

#include "SingleFlight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace attn;
using namespace attn::rt;

namespace {

using Cache = SingleFlight<int>;
using Clock = std::chrono::steady_clock;

TEST(SingleFlightTest, SameKeyFromEightThreadsBuildsOnce) {
  Cache cache;
  std::atomic<int> builds{0};
  std::atomic<bool> go{false};
  std::vector<Cache::Pointer> results(8);
  std::vector<Cache::Outcome> outcomes(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      while (!go)
        std::this_thread::yield();
      auto value = cache.get(
          "key",
          [&]() -> Expected<Cache::Pointer> {
            ++builds;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            return std::make_shared<const int>(42);
          },
          &outcomes[i]);
      ASSERT_TRUE(value.ok());
      results[i] = *value;
    });
  go = true;
  for (auto &thread : threads)
    thread.join();
  EXPECT_EQ(builds, 1);
  int built = 0;
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(results[i]);
    EXPECT_EQ(results[i], results[0]); // the very same value
    built += outcomes[i] == Cache::Outcome::Built;
  }
  EXPECT_EQ(built, 1);
  Cache::Outcome later;
  ASSERT_TRUE(cache.get("key", [&]() -> Expected<Cache::Pointer> {
    ADD_FAILURE() << "built twice";
    return std::make_shared<const int>(0);
  }, &later).ok());
  EXPECT_EQ(later, Cache::Outcome::Cached);
}

TEST(SingleFlightTest, DifferentKeysBuildInParallel) {
  Cache cache;
  constexpr int kKeys = 4;
  std::atomic<int> running{0}, maxRunning{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kKeys; ++i)
    threads.emplace_back([&, i] {
      auto value = cache.get("key" + std::to_string(i), [&]()
                                 -> Expected<Cache::Pointer> {
        int now = ++running;
        int seen = maxRunning;
        while (now > seen && !maxRunning.compare_exchange_weak(seen, now)) {
        }
        // Wait until all builds overlap (or give up after 5 s).
        auto deadline = Clock::now() + std::chrono::seconds(5);
        while (maxRunning < kKeys && Clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        --running;
        return std::make_shared<const int>(i);
      });
      ASSERT_TRUE(value.ok());
      EXPECT_EQ(**value, i);
    });
  for (auto &thread : threads)
    thread.join();
  EXPECT_EQ(maxRunning, kKeys);
  EXPECT_EQ(cache.size(), size_t(kKeys));
}

TEST(SingleFlightTest, FailureReachesWaitersAndIsNotCached) {
  Cache cache;
  std::atomic<int> builds{0};
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      auto value = cache.get("key", [&]() -> Expected<Cache::Pointer> {
        ++builds;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        return Status(ATTN_ERROR_COMPILE, "no luck");
      });
      if (!value.ok() && value.status().code() == ATTN_ERROR_COMPILE &&
          value.status().message() == "no luck")
        ++failures;
    });
  for (auto &thread : threads)
    thread.join();
  EXPECT_EQ(failures, 4);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(cache.size(), 0u);
  // The next call tries again.
  auto value = cache.get("key", [&]() -> Expected<Cache::Pointer> {
    ++builds;
    return std::make_shared<const int>(7);
  });
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(**value, 7);
  EXPECT_EQ(builds, 2);
}

TEST(SingleFlightTest, ThrowingBuildWakesWaitersWithAnError) {
  Cache cache;
  std::atomic<int> builds{0}, arrived{0};
  std::vector<Status> statuses(8);
  std::vector<Cache::Outcome> outcomes(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      ++arrived;
      auto value = cache.get(
          "key",
          [&]() -> Expected<Cache::Pointer> {
            ++builds;
            // Let the other seven join this build before it throws.
            auto deadline = Clock::now() + std::chrono::seconds(5);
            while (arrived < 8 && Clock::now() < deadline)
              std::this_thread::sleep_for(std::chrono::milliseconds(1));
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            throw std::runtime_error("out of luck");
          },
          &outcomes[i]);
      statuses[i] = value.ok() ? Status() : value.status();
    });
  for (auto &thread : threads)
    thread.join(); // a waiter left blocked would hang here
  EXPECT_EQ(builds, 1);
  int joined = 0;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(statuses[i].code(), ATTN_ERROR_INTERNAL) << i;
    EXPECT_EQ(statuses[i].message(),
              "building key threw an exception: out of luck")
        << i;
    joined += outcomes[i] == Cache::Outcome::Joined;
  }
  EXPECT_EQ(joined, 7);
  EXPECT_EQ(cache.size(), 0u); // forgotten: the next call builds again
  auto value = cache.get("key", [&]() -> Expected<Cache::Pointer> {
    ++builds;
    return std::make_shared<const int>(5);
  });
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(**value, 5);
  EXPECT_EQ(builds, 2);
}

TEST(SingleFlightTest, ThrowingSomethingElseIsAnErrorToo) {
  Cache cache;
  auto value = cache.get("k", []() -> Expected<Cache::Pointer> { throw 42; });
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().code(), ATTN_ERROR_INTERNAL);
  EXPECT_NE(value.status().message().find("not a std::exception"),
            std::string::npos)
      << value.status().message();
}

TEST(SingleFlightTest, ReadyNeverWaits) {
  // ready(): null while absent, while another thread builds (without
  // waiting for it) and after a failure; the value once built.
  Cache cache;
  EXPECT_EQ(cache.ready("key"), nullptr);
  std::atomic<bool> release{false}, started{false};
  std::thread builder([&] {
    cache.get("key", [&]() -> Expected<Cache::Pointer> {
      started = true;
      while (!release)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return std::make_shared<const int>(3);
    });
  });
  while (!started)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(cache.ready("key"), nullptr) << "building";
  release = true;
  builder.join();
  ASSERT_NE(cache.ready("key"), nullptr);
  EXPECT_EQ(*cache.ready("key"), 3);
  auto failed = cache.get("bad", []() -> Expected<Cache::Pointer> {
    return Status(ATTN_ERROR_COMPILE, "no luck");
  });
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(cache.ready("bad"), nullptr);
}

TEST(SingleFlightTest, ClearForgetsValues) {
  Cache cache;
  int builds = 0;
  auto make = [&]() -> Expected<Cache::Pointer> {
    return std::make_shared<const int>(++builds);
  };
  EXPECT_EQ(**cache.get("a", make), 1);
  EXPECT_EQ(**cache.get("a", make), 1);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(**cache.get("a", make), 2);
}

} // namespace
