// JSON lines written with write(2) from a fixed buffer: no allocation, no
// locale, no stdio, so the same writer serves the dump at a fatal signal
// (async-signal-safe) and every other dump.
//
//   LineWriter w(fd);
//   w.begin().field("type", "op").field("seq", 12).end();  // {"type":"op","seq":12}\n
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::fault {

class LineWriter {
 public:
  explicit LineWriter(int fd) : fd_(fd) {}
  ~LineWriter() { flush(); }
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;

  LineWriter& begin();                                    // {
  LineWriter& end();                                      // }\n
  LineWriter& field(const char* key, const char* value);  // a JSON string (escaped)
  LineWriter& field(const char* key, int64_t value);
  LineWriter& field(const char* key, uint64_t value);
  LineWriter& field(const char* key, int value) { return field(key, static_cast<int64_t>(value)); }
  LineWriter& field(const char* key, bool value);
  LineWriter& hex_field(const char* key, uint64_t value);  // "key":"5f3a..." (a string)
  LineWriter& begin_array(const char* key);                // "key":[
  LineWriter& element(int64_t value);
  LineWriter& end_array();  // ]

  bool failed() const { return failed_; }
  void flush();

  // Formatting helpers (also used for file names): return characters written.
  static size_t format_int(char* out, int64_t value);
  static size_t format_hex(char* out, uint64_t value);

 private:
  void put(char c);
  void put(const char* s);
  void key(const char* k);
  void comma();

  int fd_;
  char buf_[8192];
  size_t len_ = 0;
  bool first_ = true;
  bool failed_ = false;
};

}  // namespace strata::fault
