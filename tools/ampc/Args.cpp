#include "tools/ampc/Args.h"

#include <cctype>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <sstream>

namespace ampc::cli {

namespace {

/// The edit distance (insertions, deletions, substitutions) of a and b.
size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// "; did you mean '--X'?" for the option nearest `name`, if one is near;
/// else "".
std::string nearestOption(const std::string &name, const std::vector<OptionSpec> &specs) {
  std::vector<std::string> names;
  for (const OptionSpec &s : specs)
    names.push_back(s.name);
  std::string best = nearestName(name, names);
  return best.empty() ? "" : "; did you mean '--" + best + "'?";
}

} // namespace

std::vector<std::string> splitCommas(const std::string &text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty())
      items.push_back(item);
  return items;
}

std::string joinCommas(const std::vector<std::string> &items) {
  std::string text;
  for (const std::string &item : items)
    text += (text.empty() ? "" : ",") + item;
  return text;
}

std::string nearestName(const std::string &name, const std::vector<std::string> &names) {
  const std::string *best = nullptr;
  size_t bestDistance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const std::string &n : names)
    if (size_t d = editDistance(name, n); d < bestDistance)
      best = &n, bestDistance = d;
  return best ? *best : "";
}

Args::Args(int argc, char **argv, int first, const std::vector<OptionSpec> &specs) {
  tokens_.assign(argv + std::min(first, argc), argv + argc);
  // The repeatable option whose key=value came just before, for the mistake
  // `--set a=1 b=2`: b=2 would otherwise be taken as a second name or file.
  std::string lastAssignment;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-o")
      arg = "--output";
    // "-5" is a value (a negative count), not an option.
    if (arg.size() < 2 || arg[0] != '-' || std::isdigit((unsigned char)arg[1])) {
      if (!lastAssignment.empty() && arg.find('=') != std::string::npos && arg[0] != '=')
        throw UsageError("'" + arg + "' follows --" + lastAssignment +
                         " key=value: each takes its own --" + lastAssignment + " (--" +
                         lastAssignment + " " + arg + ")");
      lastAssignment.clear();
      positionals_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
    std::optional<std::string> inlineValue;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      inlineValue = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const OptionSpec *spec = nullptr;
    for (const OptionSpec &s : specs)
      if (s.name == name)
        spec = &s;
    if (!spec)
      throw UsageError("unknown option '" + arg + "'" + nearestOption(name, specs));
    std::string value;
    if (spec->takesValue) {
      if (inlineValue)
        value = *inlineValue;
      else if (i + 1 < argc)
        value = argv[++i];
      else
        throw UsageError("option '--" + name + "' needs a value");
    } else if (inlineValue) {
      throw UsageError("option '--" + name + "' takes no value");
    }
    lastAssignment = spec->repeatable && value.find('=') != std::string::npos ? name : "";
    auto &slot = values_[name];
    if (!slot.empty() && !spec->repeatable)
      throw UsageError("option '--" + name + "' is given twice");
    slot.push_back(value);
  }
}

std::optional<std::string> Args::get(const std::string &name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::getAll(const std::string &name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

int64_t Args::getInt(const std::string &name, int64_t dflt, int64_t min, int64_t max) const {
  auto v = get(name);
  if (!v)
    return dflt;
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(*v, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (v->empty() || used != v->size() || n < min || n > max)
    throw UsageError("option '--" + name + "' needs an integer from " + std::to_string(min) +
                     " to " + std::to_string(max) + ", got '" + *v + "'");
  return n;
}

double Args::getNumber(const std::string &name, double dflt, double min, double max) const {
  auto v = get(name);
  if (!v)
    return dflt;
  size_t used = 0;
  double d = 0;
  try {
    d = std::stod(*v, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (v->empty() || used != v->size() || !std::isfinite(d) || d < min || d > max) {
    char range[96];
    std::snprintf(range, sizeof range, "a number from %g to %g", min, max);
    throw UsageError("option '--" + name + "' needs " + range + ", got '" + *v + "'");
  }
  return d;
}

std::string Args::getFile(const std::string &name) const {
  auto v = get(name);
  if (v && v->empty())
    throw UsageError("option '--" + name + "' needs a file name");
  return v.value_or("");
}

std::vector<std::string> Args::getFiles(const std::string &name) const {
  std::vector<std::string> files = getAll(name);
  for (const std::string &f : files)
    if (f.empty())
      throw UsageError("option '--" + name + "' needs a file name");
  return files;
}

std::string describeOptions(const std::vector<OptionSpec> &specs) {
  std::string out;
  for (const OptionSpec &s : specs) {
    std::string left = "  --" + s.name + (s.takesValue ? " VALUE" : "");
    left.resize(std::max<size_t>(left.size() + 2, 34), ' ');
    out += left + s.help + "\n";
  }
  return out;
}

std::vector<std::string> withOption(std::vector<std::string> tokens, const std::string &name,
                                    const std::string &value, bool append) {
  std::string flag = "--" + name;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string old;
    if (tokens[i] == flag && i + 1 < tokens.size()) {
      old = tokens[i + 1];
      tokens[i + 1] = append && !old.empty() ? old + "," + value : value;
      return tokens;
    }
    if (tokens[i].rfind(flag + "=", 0) == 0) {
      old = tokens[i].substr(flag.size() + 1);
      tokens[i] = flag + "=" + (append && !old.empty() ? old + "," + value : value);
      return tokens;
    }
  }
  tokens.push_back(flag);
  tokens.push_back(value);
  return tokens;
}

std::vector<std::string> withoutOption(std::vector<std::string> tokens, const std::string &name,
                                       bool takesValue) {
  std::string flag = "--" + name;
  for (size_t i = 0; i < tokens.size();) {
    if (tokens[i] == flag)
      tokens.erase(tokens.begin() + i,
                   tokens.begin() + std::min(tokens.size(), i + (takesValue ? 2 : 1)));
    else if (tokens[i].rfind(flag + "=", 0) == 0)
      tokens.erase(tokens.begin() + i);
    else
      ++i;
  }
  return tokens;
}

std::string shellLine(const std::vector<std::string> &words) {
  std::string line;
  for (const std::string &w : words) {
    bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
      return std::isalnum((unsigned char)c) || std::string("-_./:=,+%@").find(c) != std::string::npos;
    });
    std::string quoted = "'";
    for (char c : w)
      quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += (line.empty() ? "" : " ") + (plain ? w : quoted + "'");
  }
  return line;
}

std::string oneLine(const std::string &text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char ch = text[i];
    size_t length = ch < 0x80 ? 1 : (ch >> 5) == 6 ? 2 : (ch >> 4) == 14 ? 3 : (ch >> 3) == 30 ? 4 : 0;
    bool valid = length > 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k)
      valid = (static_cast<unsigned char>(text[i + k]) >> 6) == 2;
    if (valid && length > 1) {
      out.append(text, i, length);
      i += length - 1;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (ch < 0x20 || ch >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", ch);
      out += hex;
    } else {
      out += char(ch);
    }
  }
  return out;
}

int reportError(const char *tool, const std::string &message) {
  std::fprintf(stderr, "%s: error: %s\n", tool, oneLine(message).c_str());
  return 1;
}

} // namespace ampc::cli
