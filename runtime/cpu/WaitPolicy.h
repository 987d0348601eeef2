// How the CPU runtime's OpenMP threads wait between parallel loops.
// libgomp spins a waiting thread for 300,000 rounds by default before it
// sleeps. On a dedicated machine that saves a wake-up per loop; when another
// process is busy on one of the cores, each loop waits for a thread that is
// not running, and a step takes 4 to 6 times as long. ampc's programs spin
// for 10,000 rounds instead (GOMP_SPINCOUNT), unless the user has chosen
// (OMP_WAIT_POLICY or GOMP_SPINCOUNT set). docs/performance.md has the
// measurements.
//
// libgomp reads the variables once, when it is loaded, before main() and
// before anything main() could set: a program sets the variable and
// executes itself again (/proc/self/exe, the same arguments), which costs
// one program start (about 35 ms for ampc).
#ifndef AMPC_RUNTIME_CPU_WAITPOLICY_H
#define AMPC_RUNTIME_CPU_WAITPOLICY_H

#include <string>

namespace ampc::rt {

/// ampc's spin count for waiting OpenMP threads.
inline constexpr const char *kDefaultSpinCount = "10000";

/// Unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set: sets GOMP_SPINCOUNT to
/// kDefaultSpinCount and executes the program again with `argv`. Returns
/// (doing nothing more) when either is set or the program cannot be
/// executed again. Call it first in main(), before any thread starts.
void applyWaitPolicy(char **argv);

/// The wait policy a program that applies it runs with, for `ampc
/// --version`: "GOMP_SPINCOUNT=10000 (ampc's default)", "OMP_WAIT_POLICY=passive", ...
std::string waitPolicy();

} // namespace ampc::rt

#endif
