#include "tools/ampc/Corpus.h"

#include <nlohmann/json.hpp>

#include "runtime/core/Files.h"
#include "tools/ampc/Commands.h"

namespace ampc::cli {

std::vector<std::string> readCorpus(const std::vector<std::string> &files) {
  std::vector<std::string> documents;
  for (const std::string &file : files) {
    std::string error;
    std::optional<std::string> text = rt::readFile(file, error);
    if (!text)
      throw CliError(file, "cannot read the text: " + error);
    bool jsonl = file.size() > 6 && file.compare(file.size() - 6, 6, ".jsonl") == 0;
    if (!jsonl) {
      documents.push_back(std::move(*text));
      continue;
    }
    size_t line = 0;
    for (size_t at = 0; at < text->size();) {
      size_t end = text->find('\n', at);
      if (end == std::string::npos)
        end = text->size();
      std::string row = text->substr(at, end - at);
      at = end + 1;
      ++line;
      if (row.find_first_not_of(" \t\r") == std::string::npos)
        continue; // blank lines, a trailing newline
      nlohmann::json object = nlohmann::json::parse(row, nullptr, /*allow_exceptions=*/false);
      auto field = object.is_object() ? object.find("text") : object.end();
      if (object.is_discarded() || !object.is_object() || field == object.end() ||
          !field->is_string())
        throw CliError(file, "line " + std::to_string(line) +
                                 (object.is_discarded() ? " is not JSON"
                                                        : " has no string \"text\" field") +
                                 " (a .jsonl file holds one {\"text\": ...} object per line)");
      documents.push_back(field->get<std::string>());
    }
  }
  return documents;
}

} // namespace ampc::cli
