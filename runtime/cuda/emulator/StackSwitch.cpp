// ampcEmulatorSwitch (StackSwitch.h): pushes the callee-saved registers and
// the control words on the running stack, stores its pointer, takes the
// other's and pops them there; `ret` then returns into the other context
// (or, the first time, into its entry).
#include "runtime/cuda/emulator/StackSwitch.h"

asm(R"(
  .text
  .globl ampcEmulatorSwitch
  .type ampcEmulatorSwitch, @function
ampcEmulatorSwitch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size ampcEmulatorSwitch, .-ampcEmulatorSwitch
  .section .note.GNU-stack,"",@progbits
  .text
)");
