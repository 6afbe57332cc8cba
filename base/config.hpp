// Typed STRATA_* parameters. Declare one where it is used, at namespace scope:
//
//   static strata::config::BoolParam g_disable{"STRATA_DISABLE", false,
//       "Pass every MPI call straight to the underlying library"};
//
// Values are parsed once, on the first read or at strata::config::load(), and
// are read-only afterwards, so get() is a load of a plain field.
#pragma once

#include <strata/config.hpp>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace strata::config {

STRATA_API bool equals_ignore_case(const char* a, const char* b);

class STRATA_API Parameter {
 public:
  Parameter(const char* name, const char* help);
  Parameter(const Parameter&) = delete;
  Parameter& operator=(const Parameter&) = delete;
  virtual ~Parameter();

  const char* name() const { return name_; }
  const char* help() const { return help_; }
  bool from_environment() const { return from_environment_; }

  virtual std::string type_name() const = 0;
  virtual std::string default_text() const = 0;
  virtual std::string value_text() const = 0;
  // Parses `text` into the value; false (value unchanged) when invalid.
  virtual bool parse(const char* text) = 0;
  virtual void reset() = 0;

  void set_from_environment(bool from_env) { from_environment_ = from_env; }

  // Loads the whole registry on first use.
  static void ensure_loaded();

 private:
  const char* name_;
  const char* help_;
  bool from_environment_ = false;
};

class STRATA_API BoolParam final : public Parameter {
 public:
  BoolParam(const char* name, bool def, const char* help) : Parameter(name, help), def_(def), value_(def) {}
  bool get() const {
    ensure_loaded();
    return value_;
  }
  std::string type_name() const override { return "bool"; }
  std::string default_text() const override { return def_ ? "1" : "0"; }
  std::string value_text() const override { return value_ ? "1" : "0"; }
  bool parse(const char* text) override;
  void reset() override { value_ = def_; }

 private:
  bool def_;
  bool value_;
};

// Integers accept an optional K/M/G/T suffix (powers of 1024) when is_size.
class STRATA_API IntParam final : public Parameter {
 public:
  IntParam(const char* name, int64_t def, const char* help, int64_t min = INT64_MIN, int64_t max = INT64_MAX,
           bool is_size = false)
      : Parameter(name, help), def_(def), value_(def), min_(min), max_(max), is_size_(is_size) {}
  int64_t get() const {
    ensure_loaded();
    return value_;
  }
  std::string type_name() const override { return is_size_ ? "size" : "int"; }
  std::string default_text() const override { return std::to_string(def_); }
  std::string value_text() const override { return std::to_string(value_); }
  bool parse(const char* text) override;
  void reset() override { value_ = def_; }

 private:
  int64_t def_;
  int64_t value_;
  int64_t min_;
  int64_t max_;
  bool is_size_;
};

class STRATA_API StringParam final : public Parameter {
 public:
  StringParam(const char* name, const char* def, const char* help) : Parameter(name, help), def_(def), value_(def) {}
  const std::string& get() const {
    ensure_loaded();
    return value_;
  }
  std::string type_name() const override { return "string"; }
  std::string default_text() const override { return def_; }
  std::string value_text() const override { return value_; }
  bool parse(const char* text) override {
    value_ = text;
    return true;
  }
  void reset() override { value_ = def_; }

 private:
  std::string def_;
  std::string value_;
};

// One of a fixed set of words, mapped to an enum.
template <class Enum>
class ChoiceParam final : public Parameter {
 public:
  ChoiceParam(const char* name, Enum def, std::initializer_list<std::pair<const char*, Enum>> choices, const char* help)
      : Parameter(name, help), def_(def), value_(def), choices_(choices) {}
  Enum get() const {
    ensure_loaded();
    return value_;
  }
  std::string type_name() const override {
    std::string out;
    for (const auto& c : choices_) out += (out.empty() ? "" : "|") + std::string(c.first);
    return out;
  }
  std::string default_text() const override { return word(def_); }
  std::string value_text() const override { return word(value_); }
  bool parse(const char* text) override {
    for (const auto& c : choices_) {
      if (equals_ignore_case(c.first, text)) {
        value_ = c.second;
        return true;
      }
    }
    return false;
  }
  void reset() override { value_ = def_; }

 private:
  std::string word(Enum e) const {
    for (const auto& c : choices_) {
      if (c.second == e) return c.first;
    }
    return "?";
  }
  Enum def_;
  Enum value_;
  std::vector<std::pair<const char*, Enum>> choices_;
};

// Variables with this prefix belong to test harnesses, not to the library,
// and are not reported as unknown.
inline constexpr const char* kTestPrefix = "STRATA_TEST_";

}  // namespace strata::config
