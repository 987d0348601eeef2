// The documents `ampc tokenize` reads: a text file is one document, and a
// .jsonl file one per line, its "text" field (the form Hugging Face
// datasets export). See docs/gpt.md, "ampc tokenize".
#ifndef AMPC_TOOLS_AMPC_CORPUS_H
#define AMPC_TOOLS_AMPC_CORPUS_H

#include <string>
#include <vector>

namespace ampc::cli {

/// The documents of `files`, in order. Throws CliError naming the file
/// (and the line of a .jsonl) that cannot be read.
std::vector<std::string> readCorpus(const std::vector<std::string> &files);

} // namespace ampc::cli

#endif
