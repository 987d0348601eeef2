#include "runtime/core/JsonText.h"

#include <charconv>
#include <cmath>

namespace ampc::rt {
namespace {

struct TooDeep {};

} // namespace

std::optional<Json> parseJson(std::string_view text, std::string &error) {
  try {
    return Json::parse(text.begin(), text.end(), [](int depth, Json::parse_event_t event, Json &) {
      if ((event == Json::parse_event_t::object_start ||
           event == Json::parse_event_t::array_start) &&
          depth >= kMaxJsonDepth)
        throw TooDeep{};
      return true;
    });
  } catch (const TooDeep &) {
    error = "malformed JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
  } catch (const Json::exception &e) {
    std::string what = e.what();
    size_t cut = what.find("] ");
    error = "malformed JSON: " + (cut == std::string::npos ? what : what.substr(cut + 2));
  }
  return std::nullopt;
}

std::string dumpJson(const Json &j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

Json tensorDataToJson(const std::vector<double> &data, bool singlePrecision) {
  Json out = Json::array();
  for (double x : data) {
    if (!std::isfinite(x))
      out.push_back(std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
    else
      out.push_back(singlePrecision ? shortestForFloat((float)x) : x);
  }
  return out;
}

double shortestForFloat(float v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  double d = v; // from_chars (fast_float in libstdc++) is twice as fast as strtod
  std::from_chars(buf, res.ptr, d);
  return d;
}

std::optional<double> tensorElementFromJson(const Json &x) {
  if (x.is_number())
    return x.get<double>();
  if (!x.is_string())
    return std::nullopt;
  const std::string &s = x.get_ref<const std::string &>();
  if (s == "inf" || s == "-inf")
    return s[0] == '-' ? -INFINITY : INFINITY;
  if (s == "nan")
    return NAN;
  return std::nullopt;
}

} // namespace ampc::rt
