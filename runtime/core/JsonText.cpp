#include "runtime/core/JsonText.h"

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

Json tensorDataToJson(const std::vector<double> &data) {
  Json out = Json::array();
  for (double x : data)
    out.push_back(std::isfinite(x) ? Json(x) : Json(std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf"));
  return out;
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
