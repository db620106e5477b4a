/*
 * setjmp/longjmp runtime for Lua on wasm32 with the exception-handling
 * proposal (exnref).
 *
 * clang lowers setjmp/longjmp (-mllvm -wasm-enable-sjlj) into calls to the
 * three functions below plus a `try_table` that catches the `__c_longjmp`
 * tag. Rust's self-contained wasi libc does not ship them, so the guest
 * provides them. The ABI is the one LLVM's WebAssemblyLowerEmscriptenEHSjLj
 * pass expects: the jmp_buf holds the invocation id of the function that
 * called setjmp and the label to resume at; longjmp throws a pointer to the
 * {env, val} pair.
 */
#include <stddef.h>
#include <stdint.h>

struct moonbox_jmp_arg {
  void *env;
  int val;
};

struct moonbox_jmp_buf {
  void *func_invocation_id;
  uint32_t label;
  struct moonbox_jmp_arg arg;
};

_Static_assert(sizeof(struct moonbox_jmp_buf) <= 64,
               "the jmp_buf layout must fit in wasi-libc's jmp_buf");

void __wasm_setjmp(void *env, uint32_t label, void *func_invocation_id) {
  struct moonbox_jmp_buf *jb = env;
  if (label == 0 || func_invocation_id == NULL) {
    __builtin_trap();
  }
  jb->func_invocation_id = func_invocation_id;
  jb->label = label;
}

uint32_t __wasm_setjmp_test(void *env, void *func_invocation_id) {
  struct moonbox_jmp_buf *jb = env;
  if (jb->func_invocation_id == func_invocation_id) {
    return jb->label;
  }
  return 0;
}

void __wasm_longjmp(void *env, int val) {
  struct moonbox_jmp_buf *jb = env;
  jb->arg.env = env;
  jb->arg.val = val == 0 ? 1 : val;
  /* Tag 1 is the C longjmp tag, `__c_longjmp`, defined in tag.s. */
  __builtin_wasm_throw(1, &jb->arg);
}
