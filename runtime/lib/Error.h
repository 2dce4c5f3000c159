//===- Error.h - Building Status values with fmt --------------------------===//

#ifndef ATTN_RUNTIME_ERROR_H
#define ATTN_RUNTIME_ERROR_H

#include "attn-jit/Runtime.h"

#include <fmt/format.h>

namespace attn::rt {

/// A failed Status whose message is formatted by fmt (checked at compile
/// time where the format string is a literal).
template <typename... Args>
Status makeError(attn_status code, fmt::format_string<Args...> format,
                 Args &&...args) {
  return Status(code, fmt::format(format, std::forward<Args>(args)...));
}

} // namespace attn::rt

#endif // ATTN_RUNTIME_ERROR_H
