//===- ArgParse.h - tiny command-line helpers for the attn tools ----------===//

#ifndef ATTN_JIT_TOOLS_ARG_PARSE_H
#define ATTN_JIT_TOOLS_ARG_PARSE_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace attn_tools {

// "64,128,256" -> {"64", "128", "256"}
inline std::vector<std::string> split_list(const std::string &s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

inline int64_t parse_int(const std::string &s, const char *flag) {
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  // Accept a k suffix (1k = 1024), as in the FlashAttention tables.
  if (end && (*end == 'k' || *end == 'K')) { v *= 1024; ++end; }
  if (!end || *end != '\0' || s.empty()) {
    std::fprintf(stderr, "bad value '%s' for %s\n", s.c_str(), flag);
    std::exit(64);
  }
  return v;
}

inline std::vector<int64_t> parse_int_list(const std::string &s, const char *flag) {
  std::vector<int64_t> out;
  for (const std::string &x : split_list(s)) out.push_back(parse_int(x, flag));
  return out;
}

// Returns argv[i + 1] for a flag that takes a value, or exits with a message.
inline std::string flag_value(int argc, char **argv, int &i) {
  if (i + 1 >= argc) {
    std::fprintf(stderr, "%s needs a value\n", argv[i]);
    std::exit(64);
  }
  return argv[++i];
}

} // namespace attn_tools

#endif // ATTN_JIT_TOOLS_ARG_PARSE_H
