#include "runtime/core/JsonText.h"

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

} // namespace ampc::rt
