// Reading an Einsum equation: see EinsumEquation.h.
#include "compiler/onnx/EinsumEquation.h"

#include <cctype>

namespace ampc::onnx_import {

std::vector<int64_t> EinsumEquation::shapeOf(const std::string &labels) const {
  std::vector<int64_t> s;
  for (char c : labels)
    s.push_back(size.at(c));
  return s;
}

std::string parseEinsum(const std::string &equation,
                        const std::vector<std::vector<int64_t>> &shapes, EinsumEquation &e) {
  e = EinsumEquation();
  std::string eq;
  for (char c : equation)
    if (c != ' ')
      eq += c;
  if (eq.find("...") != std::string::npos)
    return "an ellipsis (...) is not supported";
  size_t arrow = eq.find("->");
  e.terms = {""};
  for (char c : eq.substr(0, arrow))
    c == ',' ? e.terms.push_back("") : (void)(e.terms.back() += c);
  if (e.terms.size() != shapes.size())
    return "the equation has " + std::to_string(e.terms.size()) + " terms for " +
           std::to_string(shapes.size()) + " operands";
  for (size_t t = 0; t < e.terms.size(); ++t) {
    const std::string &term = e.terms[t];
    if (term.size() != shapes[t].size())
      return "term '" + term + "' does not label the " + std::to_string(shapes[t].size()) +
             " dimensions of input " + std::to_string(t);
    for (size_t d = 0; d < term.size(); ++d) {
      char c = term[d];
      std::string label(1, c);
      if (!std::isalpha((unsigned char)c))
        return "'" + label + "' is no label (a letter)";
      if (e.size.count(c) && e.size[c] != shapes[t][d])
        return "label '" + label + "' has sizes " + std::to_string(e.size[c]) + " and " +
               std::to_string(shapes[t][d]);
      e.size[c] = shapes[t][d];
      ++e.uses[c];
    }
  }
  if (arrow == std::string::npos) {
    for (auto [c, n] : e.uses)
      if (n == 1)
        e.out += c;
  } else {
    e.out = eq.substr(arrow + 2);
  }
  for (size_t i = 0; i < e.out.size(); ++i)
    if (!e.size.count(e.out[i]) || e.out.find(e.out[i]) != i)
      return "output label '" + std::string(1, e.out[i]) + "' is not an input's, or repeats";
  return "";
}

} // namespace ampc::onnx_import
