// Switching the host thread between the emulation's fibers (Emulator.cpp):
// the callee-saved registers, the SSE and x87 control words and the stack
// pointer, x86-64 System V only (CMake builds the emulation there alone).
// glibc's swapcontext does the same plus a system call for the signal mask,
// which made it most of the emulation's time.
#ifndef AMPC_RUNTIME_CUDA_EMULATOR_STACKSWITCH_H
#define AMPC_RUNTIME_CUDA_EMULATOR_STACKSWITCH_H

#include <cstddef>
#include <cstdint>
#include <cstring>

/// Saves the running context's stack pointer in *from and resumes `to`.
extern "C" void ampcEmulatorSwitch(void **from, void *to);

namespace ampc::emu {

/// A stack, `bytes` from `base`, made ready to start `entry` (which must
/// never return) on the first switch to the stack pointer returned.
inline void *prepareStack(char *base, size_t bytes, void (*entry)()) {
  auto top = reinterpret_cast<uintptr_t>(base + bytes) & ~uintptr_t(15);
  auto *slot = reinterpret_cast<uint64_t *>(top);
  *--slot = 0;                                   // entry's return address: none
  *--slot = reinterpret_cast<uint64_t>(entry);   // where the switch returns to
  for (int i = 0; i < 6; ++i)                    // rbp, rbx, r12 to r15
    *--slot = 0;
  uint32_t control[2];
  asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(control[0]), "=m"(control[1]));
  --slot;
  std::memcpy(slot, control, sizeof control); // the MXCSR and x87 control word
  return slot;
}

} // namespace ampc::emu

#endif
