//===- Log.cpp - ATTN_JIT_LOG diagnostics on stderr -----------------------===//

#include "Log.h"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace attn::rt {

LogLevel logLevelFromEnvironment() {
  const char *value = std::getenv("ATTN_JIT_LOG");
  if (!value || !*value || std::string_view(value) == "0")
    return LogLevel::Off;
  if (std::string_view(value) == "2")
    return LogLevel::Verbose;
  return LogLevel::Info;
}

void writeLogLine(std::string_view line) {
  std::string text;
  text.reserve(line.size() + 11);
  text += "attn-jit: ";
  text += line;
  text += '\n';
  const char *data = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t written = ::write(STDERR_FILENO, data, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return; // stderr is gone: logging must never fail a call
    data += written;
    left -= static_cast<size_t>(written);
  }
}

} // namespace attn::rt
