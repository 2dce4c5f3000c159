//===- Log.h - ATTN_JIT_LOG diagnostics on stderr -------------------------===//
//
// ATTN_JIT_LOG=1 logs compiles, disk cache hits, misses and rejections, and
// failed calls; ATTN_JIT_LOG=2 also logs every in-memory cache hit (one line
// a call). Each line is written with a single write(2), so lines from
// threads and processes never interleave.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_LOG_H
#define ATTN_RUNTIME_LOG_H

#include <fmt/format.h>

#include <string_view>

namespace attn::rt {

enum class LogLevel { Off = 0, Info = 1, Verbose = 2 };

/// The level parsed from ATTN_JIT_LOG ("", "0": off; "1": info; "2": verbose;
/// anything else: info).
LogLevel logLevelFromEnvironment();

/// Writes "attn-jit: <line>\n" to stderr.
void writeLogLine(std::string_view line);

template <typename... Args>
void logLine(fmt::format_string<Args...> format, Args &&...args) {
  writeLogLine(fmt::format(format, std::forward<Args>(args)...));
}

} // namespace attn::rt

#endif // ATTN_RUNTIME_LOG_H
