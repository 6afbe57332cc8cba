// Byte-level encoding of out-of-band messages: plain values appended in the
// host's byte order (the ranks of one job share an architecture; HELLO
// carries a byte-order mark and the version, and a mismatch refuses the
// connection), strings as a length and bytes. The reader checks every
// length against what is left.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace strata::fault::oob {

class Packer {
 public:
  template <class T>
  Packer& put(const T& v) {
    static_assert(std::is_trivially_copyable<T>::value, "plain values only");
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
    return *this;
  }
  Packer& put_string(const std::string& s) {
    put(static_cast<uint32_t>(s.size()));
    out_.append(s);
    return *this;
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

class Unpacker {
 public:
  Unpacker(const char* data, size_t size) : p_(data), left_(size) {}
  template <class T>
  bool get(T* v) {
    static_assert(std::is_trivially_copyable<T>::value, "plain values only");
    if (left_ < sizeof(T)) return fail();
    std::memcpy(v, p_, sizeof(T));
    p_ += sizeof(T);
    left_ -= sizeof(T);
    return true;
  }
  bool get_string(std::string* s, size_t max = 1 << 20) {
    uint32_t n = 0;
    if (!get(&n) || n > left_ || n > max) return fail();
    s->assign(p_, n);
    p_ += n;
    left_ -= n;
    return true;
  }
  bool ok() const { return ok_; }
  size_t left() const { return left_; }

 private:
  bool fail() {
    ok_ = false;
    left_ = 0;
    return false;
  }
  const char* p_;
  size_t left_;
  bool ok_ = true;
};

}  // namespace strata::fault::oob
