//===- ByteIO.h - Little-endian serialization helpers ---------------------===//

#ifndef ATTN_RUNTIME_BYTEIO_H
#define ATTN_RUNTIME_BYTEIO_H

#include <cstdint>
#include <string>
#include <string_view>

namespace attn::rt {

/// Appends fixed-width little-endian integers and length-prefixed strings.
class ByteWriter {
public:
  void u32(uint32_t value) { fixed(value, 4); }
  void u64(uint64_t value) { fixed(value, 8); }
  void i32(int32_t value) { u32(static_cast<uint32_t>(value)); }
  void bytes(std::string_view data) { out_.append(data); }
  /// A u64 length followed by the bytes.
  void string(std::string_view data) {
    u64(data.size());
    bytes(data);
  }
  std::string take() { return std::move(out_); }
  const std::string &data() const { return out_; }

private:
  void fixed(uint64_t value, int size) {
    for (int i = 0; i < size; ++i)
      out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
  std::string out_;
};

/// Reads what ByteWriter wrote. Every read past the end fails (returns false)
/// and leaves the reader failed, so that truncated input is never misread.
class ByteReader {
public:
  explicit ByteReader(std::string_view data) : data_(data) {}

  bool u32(uint32_t &value) {
    uint64_t wide = 0;
    if (!fixed(wide, 4))
      return false;
    value = static_cast<uint32_t>(wide);
    return true;
  }
  bool u64(uint64_t &value) { return fixed(value, 8); }
  bool i32(int32_t &value) {
    uint32_t raw = 0;
    if (!u32(raw))
      return false;
    value = static_cast<int32_t>(raw);
    return true;
  }
  bool bytes(size_t size, std::string_view &out) {
    if (failed_ || size > data_.size() - pos_)
      return fail();
    out = data_.substr(pos_, size);
    pos_ += size;
    return true;
  }
  bool string(std::string &out) {
    uint64_t size = 0;
    std::string_view view;
    if (!u64(size) || !bytes(size, view))
      return false;
    out.assign(view);
    return true;
  }
  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

private:
  bool fixed(uint64_t &value, int size) {
    if (failed_ || data_.size() - pos_ < static_cast<size_t>(size))
      return fail();
    value = 0;
    for (int i = 0; i < size; ++i)
      value |= static_cast<uint64_t>(static_cast<unsigned char>(data_[pos_ + i]))
               << (8 * i);
    pos_ += size;
    return true;
  }
  bool fail() {
    failed_ = true;
    return false;
  }
  std::string_view data_;
  size_t pos_ = 0;
  bool failed_ = false;
};

} // namespace attn::rt

#endif // ATTN_RUNTIME_BYTEIO_H
