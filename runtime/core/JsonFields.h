// Typed, checked access to the fields of a JSON object: a missing field, a
// value of the wrong type or a number out of range throws `Error` (the
// reader's own error type) with a message that names where and which key.
#ifndef AMPC_RUNTIME_CORE_JSONFIELDS_H
#define AMPC_RUNTIME_CORE_JSONFIELDS_H

#include <string>
#include <vector>

#include "runtime/core/JsonText.h"

namespace ampc::rt {

template <typename Error> class JsonFields {
public:
  JsonFields(const Json &object, std::string where) : j_(object), where_(std::move(where)) {
    if (!j_.is_object())
      throw Error(where_ + ": must be a JSON object");
  }

  bool has(const char *key) const { return j_.contains(key); }

  const Json &any(const char *key) const {
    auto it = j_.find(key);
    if (it == j_.end())
      fail("missing \"" + std::string(key) + "\"");
    return *it;
  }

  std::string str(const char *key) const {
    const Json &v = any(key);
    if (!v.is_string())
      wrong(key, "a string");
    return v.template get<std::string>();
  }
  std::string str(const char *key, const std::string &dflt) const {
    return has(key) ? str(key) : dflt;
  }

  bool boolean(const char *key) const {
    const Json &v = any(key);
    if (!v.is_boolean())
      wrong(key, "true or false");
    return v.template get<bool>();
  }
  bool boolean(const char *key, bool dflt) const { return has(key) ? boolean(key) : dflt; }

  int64_t integer(const char *key, int64_t lo, int64_t hi) const {
    return integerOf(any(key), key, lo, hi);
  }

  double number(const char *key) const {
    const Json &v = any(key);
    if (!v.is_number())
      wrong(key, "a number");
    return v.template get<double>();
  }
  double number(const char *key, double dflt) const { return has(key) ? number(key) : dflt; }

  std::vector<int64_t> integers(const char *key, int64_t lo, int64_t hi) const {
    const Json &v = array(key);
    std::vector<int64_t> out;
    out.reserve(v.size());
    for (const Json &x : v)
      out.push_back(integerOf(x, key, lo, hi));
    return out;
  }

  std::vector<double> numbers(const char *key) const {
    const Json &v = array(key);
    std::vector<double> out;
    out.reserve(v.size());
    for (const Json &x : v) { // tensor data: inf and NaN as JSON cannot hold them
      std::optional<double> e = tensorElementFromJson(x);
      if (!e)
        wrong(key, "a list of numbers (or \"inf\", \"-inf\", \"nan\")");
      out.push_back(*e);
    }
    return out;
  }

  const Json &array(const char *key) const {
    const Json &v = any(key);
    if (!v.is_array())
      wrong(key, "a list");
    return v;
  }

  const Json &object(const char *key) const {
    const Json &v = any(key);
    if (!v.is_object())
      wrong(key, "an object");
    return v;
  }

  [[noreturn]] void fail(const std::string &what) const { throw Error(where_ + ": " + what); }

private:
  [[noreturn]] void wrong(const char *key, const char *what) const {
    fail("\"" + std::string(key) + "\" must be " + what);
  }

  int64_t integerOf(const Json &v, const char *key, int64_t lo, int64_t hi) const {
    if (v.is_number_unsigned() && v.template get<uint64_t>() <= uint64_t(hi) &&
        int64_t(v.template get<uint64_t>()) >= lo)
      return int64_t(v.template get<uint64_t>());
    if (v.is_number_integer() && !v.is_number_unsigned() && v.template get<int64_t>() >= lo &&
        v.template get<int64_t>() <= hi)
      return v.template get<int64_t>();
    fail("\"" + std::string(key) + "\" must be an integer from " + std::to_string(lo) + " to " +
         std::to_string(hi));
  }

  const Json &j_;
  std::string where_;
};

} // namespace ampc::rt

#endif
