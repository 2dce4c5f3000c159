//===- DiskCache.cpp - Compiled kernels shared by processes on disk -------===//

#include "DiskCache.h"
#include "ByteIO.h"
#include "Checksum.h"
#include "Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace attn::rt {

namespace {

constexpr size_t kHeaderSize = sizeof(kEntryMagic) + 4 + 8 + 8;
constexpr size_t kChecksumSize = 16;
/// Larger files are not kernels: refuse to read them into memory.
constexpr uint64_t kMaxEntrySize = 1ull << 30;
/// Temporary files live for the milliseconds of one write: one older than
/// this belongs to a writer that died mid-write.
constexpr auto kDeadTempAge = std::chrono::minutes(10);
constexpr auto kBuildPollInterval = std::chrono::milliseconds(20);
constexpr std::string_view kTempInfix = ".tmp.";
constexpr std::string_view kEntrySuffix = ".kernel";
constexpr size_t kHashDigits = 16;

std::string errnoText(int error) { return std::strerror(error); }

bool isFalse(std::string_view value) {
  std::string lower(value);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return lower == "0" || lower == "false" || lower == "off" || lower == "no";
}

std::string homeDirectory() {
  if (const char *home = std::getenv("HOME"); home && *home)
    return home;
  struct passwd entry, *result = nullptr;
  char buffer[4096];
  if (getpwuid_r(getuid(), &entry, buffer, sizeof buffer, &result) == 0 &&
      result && result->pw_dir)
    return result->pw_dir;
  return "";
}

/// mkdir -p with mode 0700 for what it creates.
Status makeDirectories(const std::string &path) {
  if (path.empty())
    return makeError(ATTN_ERROR_INVALID_ARGUMENT, "empty cache directory");
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      return makeError(ATTN_ERROR_INTERNAL, "cannot create {}: {}", prefix,
                       errnoText(errno));
    if (slash == std::string::npos)
      break;
  }
  return Status();
}

/// Whether `path` is a directory that only `owner` can write: anyone else
/// who could would choose the code that runs on the GPU.
Status checkDirectory(const std::string &path, uid_t owner) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return makeError(ATTN_ERROR_INTERNAL, "cannot stat {}: {}", path,
                     errnoText(errno));
  if (!S_ISDIR(info.st_mode))
    return makeError(ATTN_ERROR_INTERNAL, "{} is not a directory", path);
  if (info.st_uid != owner)
    return makeError(ATTN_ERROR_INTERNAL,
                     "{} belongs to uid {}, not to this user (uid {}); its "
                     "entries would be code run on the GPU",
                     path, info.st_uid, owner);
  if (info.st_mode & (S_IWGRP | S_IWOTH)) {
    bool group = info.st_mode & S_IWGRP, others = info.st_mode & S_IWOTH;
    return makeError(ATTN_ERROR_INTERNAL,
                     "{} is writable by {} (mode {:o}); its entries would be "
                     "code run on the GPU",
                     path,
                     group && others ? "its group and others"
                     : group         ? "its group"
                                     : "others",
                     info.st_mode & 07777);
  }
  return Status();
}

bool writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return false;
    data.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

void syncDirectory(const std::string &directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return; // durability only: the rename is already atomic
  ::fsync(fd);
  ::close(fd);
}

/// Whether `name` is an entry's file name, "<16 hex digits>.kernel" (not a
/// temporary file, a lock or anything else).
bool isEntryName(std::string_view name) {
  return name.size() == kHashDigits + kEntrySuffix.size() &&
         name.substr(kHashDigits) == kEntrySuffix &&
         name.find_first_not_of("0123456789abcdef") == kHashDigits;
}

/// Removes the entries of `directory` least recently used first (by
/// modification time, which a hit sets) until they total at most
/// `maxBytes`; `keep`, the entry just written, stays.
///
/// Not llvm::pruneCache: besides pruning only files named "llvmcache-*", it
/// calls report_fatal_error when statvfs fails (a directory removed while
/// pruning would end the user's process) and creates its
/// "llvmcache.timestamp" with a blocking open (a FIFO there would hang the
/// call, as in issue 14's defect 5). Every write prunes, so no interval.
void pruneEntries(const std::string &directory, uint64_t maxBytes,
                  std::string_view keep) {
  if (maxBytes == 0)
    return;
  int dirFd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd < 0)
    return;
  DIR *dir = ::fdopendir(dirFd);
  if (!dir) {
    ::close(dirFd);
    return;
  }
  struct Entry {
    struct timespec used;
    uint64_t size;
    std::string name;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  while (struct dirent *entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    struct stat info;
    if (!isEntryName(name) ||
        ::fstatat(dirFd, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(info.st_mode))
      continue;
    total += static_cast<uint64_t>(info.st_size);
    if (name != keep)
      entries.push_back({info.st_mtim, static_cast<uint64_t>(info.st_size),
                         std::string(name)});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return std::tie(a.used.tv_sec, a.used.tv_nsec, a.name) <
           std::tie(b.used.tv_sec, b.used.tv_nsec, b.name);
  });
  // Another process may remove the same files meanwhile: either way they
  // are gone.
  for (size_t i = 0; i < entries.size() && total > maxBytes; ++i) {
    ::unlinkat(dirFd, entries[i].name.c_str(), 0);
    total -= entries[i].size;
  }
  ::closedir(dir); // closes dirFd
}

} // namespace

DiskCacheSettings diskCacheSettingsFromEnvironment() {
  DiskCacheSettings settings;
  if (const char *limit = std::getenv("ATTN_JIT_CACHE_MAX_MB");
      limit && *limit) {
    std::string_view text = limit;
    uint64_t megabytes = 0;
    auto [end, error] =
        std::from_chars(text.data(), text.data() + text.size(), megabytes);
    if (error != std::errc() || end != text.data() + text.size() ||
        megabytes > UINT64_MAX / kBytesPerMB)
      settings.ignored = fmt::format(
          "ATTN_JIT_CACHE_MAX_MB={} is not a number of MiB; the limit is {} "
          "MiB",
          text, kDefaultCacheMaxMB);
    else
      settings.maxBytes = megabytes * kBytesPerMB;
  }
  if (const char *flag = std::getenv("ATTN_JIT_DISK_CACHE");
      flag && isFalse(flag)) {
    settings.reason = fmt::format("ATTN_JIT_DISK_CACHE={}", flag);
    return settings;
  }
  if (const char *dir = std::getenv("ATTN_JIT_CACHE_DIR"); dir && *dir) {
    settings.enabled = true;
    settings.directory = dir;
    return settings;
  }
  // The XDG spec says to ignore relative values.
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/') {
    settings.enabled = true;
    settings.directory = std::string(xdg) + "/attn-jit";
    return settings;
  }
  std::string home = homeDirectory();
  if (home.empty()) {
    settings.reason = "no ATTN_JIT_CACHE_DIR, XDG_CACHE_HOME or home directory";
    return settings;
  }
  settings.enabled = true;
  settings.directory = home + "/.cache/attn-jit";
  return settings;
}

std::string encodeEntry(std::string_view key, std::string_view payload) {
  ByteWriter writer;
  writer.bytes(std::string_view(kEntryMagic, sizeof kEntryMagic));
  writer.u32(kEntryFormatVersion);
  writer.u64(key.size());
  writer.u64(payload.size());
  writer.bytes(key);
  writer.bytes(payload);
  Checksum128 checksum = entryChecksum(writer.data());
  writer.u64(checksum.low);
  writer.u64(checksum.high);
  return writer.take();
}

EntryCheck decodeEntry(std::string_view file, std::string_view expectedKey,
                       std::string &payload, std::string &reason) {
  ByteReader reader(file);
  std::string_view magic;
  uint32_t version = 0;
  uint64_t keySize = 0, payloadSize = 0;
  if (!reader.bytes(sizeof kEntryMagic, magic) || !reader.u32(version) ||
      !reader.u64(keySize) || !reader.u64(payloadSize)) {
    reason = fmt::format("truncated: {} bytes, shorter than the header",
                         file.size());
    return EntryCheck::Invalid;
  }
  if (magic != std::string_view(kEntryMagic, sizeof kEntryMagic)) {
    reason = "not an attn-jit cache entry (bad magic)";
    return EntryCheck::Invalid;
  }
  // Not checked further: each version has its own layout and checksum.
  if (version != kEntryFormatVersion) {
    reason = fmt::format("format version {} (this build reads {})", version,
                         kEntryFormatVersion);
    return EntryCheck::OtherFormat;
  }
  // Compare in a way that cannot overflow, whatever the header says.
  uint64_t available = file.size() - kHeaderSize;
  if (keySize > available || payloadSize > available - keySize ||
      available - keySize - payloadSize != kChecksumSize) {
    if (keySize <= available && payloadSize <= available - keySize &&
        available - keySize - payloadSize > kChecksumSize)
      reason = fmt::format("{} bytes, longer than its header says",
                           file.size());
    else
      reason = fmt::format("truncated: {} bytes, its header says {}",
                           file.size(),
                           kHeaderSize + keySize + payloadSize + kChecksumSize);
    return EntryCheck::Invalid;
  }
  std::string_view key, body;
  Checksum128 stored;
  reader.bytes(keySize, key);
  reader.bytes(payloadSize, body);
  reader.u64(stored.low);
  reader.u64(stored.high);
  Checksum128 actual =
      entryChecksum(file.substr(0, file.size() - kChecksumSize));
  if (stored != actual) {
    reason = fmt::format("checksum mismatch (stored {:016x}{:016x}, computed "
                         "{:016x}{:016x})",
                         stored.high, stored.low, actual.high, actual.low);
    return EntryCheck::Invalid;
  }
  if (key != expectedKey) {
    reason = fmt::format("built for another key: {}", key);
    return EntryCheck::Invalid;
  }
  payload.assign(body);
  return EntryCheck::Valid;
}

Expected<DiskCache> DiskCache::open(std::string directory,
                                    DiskCacheOptions options) {
  while (directory.size() > 1 && directory.back() == '/')
    directory.pop_back();
  Status status = makeDirectories(directory);
  if (status.ok())
    status = checkDirectory(directory, options.owner.value_or(::geteuid()));
  if (!status.ok())
    return status;
  return DiskCache(std::move(directory), options.maxBytes);
}

std::string DiskCache::entryPath(std::string_view key) const {
  return fmt::format("{}/{}{}", directory_, keyHashHex(key), kEntrySuffix);
}

DiskCache::Lookup DiskCache::load(std::string_view key) const {
  Lookup lookup;
  lookup.path = entryPath(key);
  // O_NONBLOCK: a FIFO (or device) at the path must not block the call; it
  // is then rejected as not a regular file.
  int fd = ::open(lookup.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno != ENOENT)
      lookup.reason = fmt::format("cannot open: {}", errnoText(errno));
    return lookup;
  }
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<uint64_t>(info.st_size) > kMaxEntrySize) {
    ::close(fd);
    lookup.kind = LookupKind::Rejected;
    lookup.reason = "not a regular file of a plausible size";
    return lookup;
  }
  std::string file(static_cast<size_t>(info.st_size), '\0');
  size_t done = 0;
  while (done < file.size()) {
    ssize_t got = ::read(fd, file.data() + done, file.size() - done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    done += static_cast<size_t>(got);
  }
  // A file that shrank while being read is rejected like a truncated one;
  // entries are replaced by rename, so this only happens to foreign writers.
  file.resize(done);
  switch (decodeEntry(file, key, lookup.payload, lookup.reason)) {
  case EntryCheck::Valid:
    lookup.kind = LookupKind::Hit;
    // Used now, for pruning. Not the access time: noatime and relatime
    // mounts do not keep it, and backups that read files would reset it.
    // Best effort: a read-only cache still serves hits.
    ::futimens(fd, nullptr);
    break;
  case EntryCheck::OtherFormat:
    lookup.kind = LookupKind::Miss; // stale, not damaged: rebuilt in place
    break;
  case EntryCheck::Invalid:
    lookup.kind = LookupKind::Rejected;
    break;
  }
  ::close(fd);
  return lookup;
}

void DiskCache::removeDeadTemporaries() const {
  DIR *dir = ::opendir(directory_.c_str());
  if (!dir)
    return;
  auto now = std::chrono::system_clock::now();
  while (struct dirent *entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name.find(kTempInfix) == std::string_view::npos)
      continue;
    std::string path = directory_ + "/" + std::string(name);
    struct stat info;
    if (::lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        now - std::chrono::system_clock::from_time_t(info.st_mtime) >
            kDeadTempAge)
      ::unlink(path.c_str());
  }
  ::closedir(dir);
}

DiskCache::Build
DiskCache::beginBuild(std::string_view key,
                      std::chrono::milliseconds maxWait) const {
  Build build;
  build.key_ = key;
  build.directory_ = directory_;
  build.finalPath_ = entryPath(key);
  build.maxBytes_ = maxBytes_;
  std::string hash = keyHashHex(key);
  build.lockPath_ = fmt::format("{}/{}.lock", directory_, hash);
  build.tempPattern_ = fmt::format("{}/{}{}XXXXXX", directory_, hash, kTempInfix);
  auto deadline = std::chrono::steady_clock::now() + maxWait;
  for (;;) {
    int fd = ::open(build.lockPath_.c_str(),
                    O_CREAT | O_RDWR | O_CLOEXEC | O_NONBLOCK, 0600);
    if (fd < 0)
      break; // not writable: build unclaimed, commit will say why
    struct stat lockInfo;
    if (::fstat(fd, &lockInfo) != 0 || !S_ISREG(lockInfo.st_mode)) {
      ::close(fd);
      break; // something else at the lock's path: build unclaimed
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      // Ours, unless its holder unlinked it between our open and flock.
      struct stat locked, current;
      if (::fstat(fd, &locked) == 0 &&
          ::stat(build.lockPath_.c_str(), &current) == 0 &&
          locked.st_ino == current.st_ino && locked.st_dev == current.st_dev) {
        build.lockFd_ = fd;
        break;
      }
      ::close(fd);
      continue;
    }
    ::close(fd);
    build.waited_ = true;
    if (std::chrono::steady_clock::now() >= deadline) {
      build.timedOut_ = true;
      break;
    }
    std::this_thread::sleep_for(kBuildPollInterval);
  }
  removeDeadTemporaries();
  return build;
}

DiskCache::Build &DiskCache::Build::operator=(Build &&other) noexcept {
  if (this != &other) {
    abandon();
    key_ = std::move(other.key_);
    finalPath_ = std::move(other.finalPath_);
    lockPath_ = std::move(other.lockPath_);
    tempPattern_ = std::move(other.tempPattern_);
    directory_ = std::move(other.directory_);
    maxBytes_ = other.maxBytes_;
    lockFd_ = other.lockFd_;
    waited_ = other.waited_;
    timedOut_ = other.timedOut_;
    other.lockFd_ = -1;
  }
  return *this;
}

void DiskCache::Build::abandon() {
  if (lockFd_ < 0)
    return;
  // Unlink before unlocking: a waiter that locks the old file afterwards
  // sees that it is no longer at the path and tries again.
  ::unlink(lockPath_.c_str());
  ::close(lockFd_);
  lockFd_ = -1;
}

Status DiskCache::Build::commit(std::string_view payload) {
  std::string temp = tempPattern_;
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) {
    Status status = makeError(ATTN_ERROR_INTERNAL,
                              "cannot create a temporary file in {}: {}",
                              directory_, errnoText(errno));
    abandon();
    return status;
  }
  std::string file = encodeEntry(key_, payload);
  Status status;
  // A write past the process's file-size limit (ulimit -f) would raise
  // SIGXFSZ, which ends the process: such an entry is not written.
  struct rlimit limit;
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      static_cast<uint64_t>(file.size()) > static_cast<uint64_t>(limit.rlim_cur))
    status = makeError(ATTN_ERROR_INTERNAL,
                       "the {}-byte entry exceeds the process's file-size "
                       "limit ({} bytes, ulimit -f)",
                       file.size(), static_cast<uint64_t>(limit.rlim_cur));
  else if (!writeAll(fd, file))
    status = makeError(ATTN_ERROR_INTERNAL, "cannot write {}: {}", temp,
                       errnoText(errno));
  else if (::fsync(fd) != 0)
    status = makeError(ATTN_ERROR_INTERNAL, "cannot fsync {}: {}", temp,
                       errnoText(errno));
  else if (::rename(temp.c_str(), finalPath_.c_str()) != 0)
    status = makeError(ATTN_ERROR_INTERNAL, "cannot rename {} to {}: {}", temp,
                       finalPath_, errnoText(errno));
  ::close(fd);
  if (!status.ok())
    ::unlink(temp.c_str());
  else
    syncDirectory(directory_);
  // Waiters now find the entry.
  abandon();
  if (status.ok())
    pruneEntries(directory_, maxBytes_,
                 std::string_view(finalPath_).substr(directory_.size() + 1));
  return status;
}

Status DiskCache::store(std::string_view key, std::string_view payload) const {
  return beginBuild(key, std::chrono::milliseconds(0)).commit(payload);
}

} // namespace attn::rt
