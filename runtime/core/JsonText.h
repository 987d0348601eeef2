// JSON text in and out, for every reader and writer of the project: one
// parser with the limits a user's file must respect, and one writer that
// cannot fail on the bytes it is given.
#ifndef AMPC_RUNTIME_CORE_JSONTEXT_H
#define AMPC_RUNTIME_CORE_JSONTEXT_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ampc::rt {

using Json = nlohmann::ordered_json;

/// Arrays and objects nest at most this deep in any file ampc reads.
constexpr int kMaxJsonDepth = 256;

/// Parses `text`; a syntax error, a number beyond double range or nesting
/// deeper than kMaxJsonDepth gives nullopt and a one-line `error`
/// ("malformed JSON: ...").
std::optional<Json> parseJson(std::string_view text, std::string &error);

/// `j` as JSON text (`indent` < 0: compact). Bytes that are not UTF-8 are
/// written as U+FFFD: JSON cannot hold them.
std::string dumpJson(const Json &j, int indent = -1);

/// A tensor's elements as JSON numbers (graphs' and plans' "data"). JSON has
/// no inf or NaN: those are the strings "inf", "-inf" and "nan". With
/// `singlePrecision` (values of f32 or a narrower float), each is written as
/// the shortest decimal that reads back as its f32, as people write them
/// (1e-05, not 9.99999974737875e-06).
Json tensorDataToJson(const std::vector<double> &data, bool singlePrecision);

/// The double nearest the shortest decimal that reads back as the f32 `v`.
double shortestForFloat(float v);
/// One element as tensorDataToJson writes it; nullopt for anything else.
std::optional<double> tensorElementFromJson(const Json &x);

} // namespace ampc::rt

#endif
