// A progress bar on a terminal; plain lines (about ten per run) otherwise.
#ifndef AMPC_TOOLS_AMPC_PROGRESS_H
#define AMPC_TOOLS_AMPC_PROGRESS_H

#include <cstdio>
#include <string>
#include <unistd.h>

namespace ampc::cli {

class Progress {
public:
  Progress(std::string label, int64_t total)
      : label_(std::move(label)), total_(total), tty_(isatty(fileno(stderr))) {}

  /// How many updates a run should send: a bar redraws a hundred times,
  /// plain lines come about ten per run.
  static int64_t updatesPerRun() { return isatty(fileno(stderr)) ? 100 : 10; }

  void update(int64_t done, const std::string &status) {
    if (tty_) {
      int width = 30, filled = total_ ? int(width * done / total_) : width;
      std::fprintf(stderr, "\r%s [%s%s] %lld/%lld %s\033[K", label_.c_str(),
                   std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                   (long long)done, (long long)total_, status.c_str());
      std::fflush(stderr);
    } else if (done == total_ || done % std::max<int64_t>(1, total_ / 10) == 0) {
      std::fprintf(stderr, "%s %lld/%lld %s\n", label_.c_str(), (long long)done,
                   (long long)total_, status.c_str());
    }
  }

  void finish() {
    if (tty_)
      std::fprintf(stderr, "\n");
  }

private:
  std::string label_;
  int64_t total_;
  bool tty_;
};

} // namespace ampc::cli

#endif
