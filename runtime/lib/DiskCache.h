//===- DiskCache.h - Compiled kernels shared by processes on disk ---------===//
//
// The directory must belong to the user and be writable by nobody else (an
// entry is code that runs on the GPU): open() refuses any other, and the
// engine then keeps kernels in memory only.
//
// One file per key, "<XXH3-64 of the key>.kernel", holding
//   "ATTNJITK" | u32 format version | u64 key size | u64 payload size |
//   key | payload | XXH3-128 of everything before it (u64 low, u64 high)
// (integers little-endian, hashes from Checksum.h). A reader checks all of
// it, so a corrupt, truncated or foreign (other key, same hash) file is
// rejected, never used; a file of another format version is a miss.
//
// Writers never modify a visible file: they write "<hash>.tmp.XXXXXX" in the
// same directory, fsync it and rename it over "<hash>.kernel", so readers see
// the old file, the new one or none, never a partial one. Readers never wait
// and never lock.
//
// So that processes starting together do not all compile the same kernel, a
// builder first claims the key with flock(LOCK_EX) on "<hash>.lock" and
// others wait (bounded) for its entry. The claim is the kernel's lock, not
// the file: it ends when the holder releases it or dies, so a leftover file
// never blocks anyone (the next builder simply locks it). The holder unlinks
// the file before it releases the lock, and a new holder checks that the file
// it locked is still the one at the path, so two builders never both think
// they hold the claim.
//
// After each write the least recently used entries are removed until the
// entries total at most the size limit. A hit sets its entry's modification
// time to now, so that time is its last use. Only "<16 hex digits>.kernel"
// files are ever pruned: temporary files and locks are left alone.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_DISKCACHE_H
#define ATTN_RUNTIME_DISKCACHE_H

#include "attn-jit/Runtime.h"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace attn::rt {

/// The size limit of the entries when ATTN_JIT_CACHE_MAX_MB is unset.
inline constexpr uint64_t kDefaultCacheMaxMB = 1024;
inline constexpr uint64_t kBytesPerMB = uint64_t(1) << 20;
inline constexpr uint64_t kDefaultCacheMaxBytes =
    kDefaultCacheMaxMB * kBytesPerMB;

/// Where the disk cache lives, from ATTN_JIT_DISK_CACHE (0/false/off/no
/// disables it), ATTN_JIT_CACHE_DIR, $XDG_CACHE_HOME/attn-jit and
/// ~/.cache/attn-jit, in that order; its size limit from
/// ATTN_JIT_CACHE_MAX_MB (MiB; 0: no limit).
struct DiskCacheSettings {
  bool enabled = false;
  std::string directory;
  std::string reason; ///< why it is disabled, when it is
  uint64_t maxBytes = kDefaultCacheMaxBytes; ///< 0: no limit
  std::string ignored; ///< a setting that was ignored, and why
};
DiskCacheSettings diskCacheSettingsFromEnvironment();

/// The file format (exposed for tests).
inline constexpr char kEntryMagic[8] = {'A', 'T', 'T', 'N', 'J', 'I', 'T', 'K'};
/// 2: XXH3-128 checksum (1: FNV-1a 64).
inline constexpr uint32_t kEntryFormatVersion = 2;
std::string encodeEntry(std::string_view key, std::string_view payload);
enum class EntryCheck {
  Valid,
  OtherFormat, ///< an intact header of another format version
  Invalid,     ///< corrupt, truncated, foreign or not an entry
};
/// Checks `file` and extracts its payload; unless Valid, says why in
/// `reason`.
EntryCheck decodeEntry(std::string_view file, std::string_view expectedKey,
                       std::string &payload, std::string &reason);

struct DiskCacheOptions {
  /// After each write, the least recently used entries are removed until
  /// the entries total at most this many bytes (the one just written stays
  /// whatever its size). 0: no limit.
  uint64_t maxBytes = kDefaultCacheMaxBytes;
  /// The user the directory must belong to; unset: the effective user.
  /// (A seam for tests, which cannot always chown.)
  std::optional<uid_t> owner;
};

class DiskCache {
public:
  /// Opens (creating it and its parents, mode 0700, when missing) the cache
  /// directory. Fails, saying why, when the directory belongs to another
  /// user or its group or others may write it.
  static Expected<DiskCache> open(std::string directory,
                                  DiskCacheOptions options = {});

  const std::string &directory() const { return directory_; }
  /// "<directory>/<keyHashHex(key)>.kernel".
  std::string entryPath(std::string_view key) const;

  enum class LookupKind { Hit, Miss, Rejected };
  struct Lookup {
    LookupKind kind = LookupKind::Miss;
    std::string payload; ///< on Hit
    std::string reason;  ///< on Rejected (and on a Miss other than "absent")
    std::string path;
  };
  /// Reads the entry of `key` and, on a hit, marks it used now. Never blocks
  /// on other processes.
  Lookup load(std::string_view key) const;

  /// A claim on building the entry of one key; see beginBuild.
  class Build {
  public:
    Build() = default;
    Build(Build &&other) noexcept { *this = std::move(other); }
    Build &operator=(Build &&other) noexcept;
    ~Build() { abandon(); }

    /// Writes `payload` for the key atomically (temporary file, fsync,
    /// rename, fsync of the directory) and releases the claim. Without a
    /// claim (see timedOut) the write is just as atomic.
    Status commit(std::string_view payload);
    /// Releases the claim (if any) without writing anything.
    void abandon();
    /// Whether another process was building the key and beginBuild waited
    /// for it: the caller should look the entry up again.
    bool waitedForOtherBuilder() const { return waited_; }
    /// Whether beginBuild gave up waiting; the build then has no claim.
    bool timedOut() const { return timedOut_; }
    bool claimed() const { return lockFd_ >= 0; }

  private:
    friend class DiskCache;
    std::string key_, finalPath_, lockPath_, tempPattern_, directory_;
    uint64_t maxBytes_ = 0;
    int lockFd_ = -1;
    bool waited_ = false, timedOut_ = false;
  };

  /// Claims the key for building. While another process (or another
  /// DiskCache user) holds the claim, waits for it, at most `maxWait`. Never
  /// fails: when the directory is not writable, commit reports it.
  Build beginBuild(std::string_view key,
                   std::chrono::milliseconds maxWait) const;

  /// Writes an entry now (beginBuild without waiting, then commit).
  Status store(std::string_view key, std::string_view payload) const;

private:
  DiskCache(std::string directory, uint64_t maxBytes)
      : directory_(std::move(directory)), maxBytes_(maxBytes) {}
  /// Removes temporary files that writers killed mid-write left behind.
  void removeDeadTemporaries() const;
  std::string directory_;
  uint64_t maxBytes_;
};

} // namespace attn::rt

#endif // ATTN_RUNTIME_DISKCACHE_H
