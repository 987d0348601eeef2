// The environment the CPU runtime's libraries read when they load, which
// ampc's programs set before they run plans:
// - How OpenMP threads wait between parallel loops. libgomp spins a waiting
//   thread for 300,000 rounds by default before it sleeps. On a dedicated
//   machine that saves a wake-up per loop; when another process is busy on
//   one of the cores, each loop waits for a thread that is not running, and
//   a step takes 4 to 6 times as long. ampc's programs spin for 10,000
//   rounds instead (GOMP_SPINCOUNT), unless the user has chosen
//   (OMP_WAIT_POLICY or GOMP_SPINCOUNT set).
// - OpenBLAS's kernels. Its runtime dispatch picks kernels by the CPU's
//   model, and a model newer than the library (Debian 12's OpenBLAS 0.3.21
//   on a Sapphire Rapids machine) gets its oldest x86-64 ones, Prescott's
//   SSE3 GEMM: 2.3x slower there than its AVX-512 kernels. Where the CPU
//   has AVX2 and FMA and OpenBLAS chose a core without them, ampc's
//   programs set OPENBLAS_CORETYPE to the core the CPU's instructions run
//   (SkylakeX with AVX-512, else Haswell), unless the user has set it.
// docs/performance.md has the measurements.
//
// Both libraries read their variables once, when they are loaded, before
// main() and before anything main() could set: a program sets the
// variables and executes itself again (/proc/self/exe, the same
// arguments), which costs one program start (about 35 ms for ampc).
#ifndef AMPC_RUNTIME_CPU_CPUENVIRONMENT_H
#define AMPC_RUNTIME_CPU_CPUENVIRONMENT_H

#include <string>

namespace ampc::rt {

/// ampc's spin count for waiting OpenMP threads.
inline constexpr const char *kDefaultSpinCount = "10000";

/// Sets GOMP_SPINCOUNT to kDefaultSpinCount unless OMP_WAIT_POLICY or
/// GOMP_SPINCOUNT is set, and OPENBLAS_CORETYPE unless it is set or
/// OpenBLAS's own choice fits the CPU (blasCoreForCpu), then executes the
/// program again with `argv`. Returns (doing nothing more) when it sets
/// nothing or the program cannot be executed again. Call it first in
/// main(), before any thread starts.
void applyCpuEnvironment(char **argv);

/// The wait policy a program that applies it runs with, for `ampc
/// --version`: "GOMP_SPINCOUNT=10000 (ampc's default)", "OMP_WAIT_POLICY=passive", ...
std::string waitPolicy();

/// The OpenBLAS core whose kernels this CPU runs best where OpenBLAS chose
/// one without AVX2 and FMA on a CPU that has them ("SkylakeX" with
/// AVX-512, else "Haswell"); null where its choice fits.
const char *blasCoreForCpu();

/// OpenBLAS's core in use and why, for `ampc --version`: "SkylakeX
/// (OPENBLAS_CORETYPE, ampc's choice: OpenBLAS detected Prescott)", ...
std::string blasCore();

} // namespace ampc::rt

#endif
