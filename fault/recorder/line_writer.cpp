#include "fault/recorder/line_writer.hpp"

#include <cerrno>
#include <unistd.h>

namespace strata::fault {

size_t LineWriter::format_int(char* out, int64_t value) {
  char tmp[24];
  size_t n = 0;
  uint64_t v = value < 0 ? static_cast<uint64_t>(0) - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  size_t w = 0;
  if (value < 0) out[w++] = '-';
  while (n > 0) out[w++] = tmp[--n];
  return w;
}

size_t LineWriter::format_hex(char* out, uint64_t value) {
  static const char kDigits[] = "0123456789abcdef";
  char tmp[16];
  size_t n = 0;
  do {
    tmp[n++] = kDigits[value & 15];
    value >>= 4;
  } while (value != 0);
  size_t w = 0;
  while (n > 0) out[w++] = tmp[--n];
  return w;
}

void LineWriter::flush() {
  size_t off = 0;
  while (off < len_ && !failed_) {
    const ssize_t n = ::write(fd_, buf_ + off, len_ - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed_ = true;
      break;
    }
    off += static_cast<size_t>(n);
  }
  len_ = 0;
}

void LineWriter::put(char c) {
  if (len_ == sizeof(buf_)) flush();
  buf_[len_++] = c;
}

void LineWriter::put(const char* s) {
  while (*s != '\0') put(*s++);
}

void LineWriter::comma() {
  if (!first_) put(',');
  first_ = false;
}

void LineWriter::key(const char* k) {
  comma();
  put('"');
  put(k);
  put("\":");
}

LineWriter& LineWriter::begin() {
  put('{');
  first_ = true;
  return *this;
}

LineWriter& LineWriter::end() {
  put("}\n");
  return *this;
}

LineWriter& LineWriter::field(const char* k, const char* value) {
  key(k);
  put('"');
  for (const char* c = value ? value : ""; *c != '\0'; ++c) {
    const unsigned char u = static_cast<unsigned char>(*c);
    if (u == '"' || u == '\\') {
      put('\\');
      put(*c);
    } else if (u < 0x20) {
      static const char kDigits[] = "0123456789abcdef";
      put("\\u00");
      put(kDigits[u >> 4]);
      put(kDigits[u & 15]);
    } else {
      put(*c);
    }
  }
  put('"');
  return *this;
}

LineWriter& LineWriter::field(const char* k, int64_t value) {
  key(k);
  char tmp[24];
  const size_t n = format_int(tmp, value);
  for (size_t i = 0; i < n; ++i) put(tmp[i]);
  return *this;
}

LineWriter& LineWriter::field(const char* k, uint64_t value) {
  key(k);
  char tmp[24];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (n > 0) put(tmp[--n]);
  return *this;
}

LineWriter& LineWriter::field(const char* k, bool value) {
  key(k);
  put(value ? "true" : "false");
  return *this;
}

LineWriter& LineWriter::hex_field(const char* k, uint64_t value) {
  key(k);
  char tmp[20];
  const size_t n = format_hex(tmp, value);
  put('"');
  for (size_t i = 0; i < n; ++i) put(tmp[i]);
  put('"');
  return *this;
}

LineWriter& LineWriter::begin_array(const char* k) {
  key(k);
  put('[');
  first_ = true;
  return *this;
}

LineWriter& LineWriter::element(int64_t value) {
  comma();
  char tmp[24];
  const size_t n = format_int(tmp, value);
  for (size_t i = 0; i < n; ++i) put(tmp[i]);
  return *this;
}

LineWriter& LineWriter::end_array() {
  put(']');
  first_ = false;
  return *this;
}

}  // namespace strata::fault
