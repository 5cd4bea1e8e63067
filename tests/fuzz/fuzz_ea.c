/* fuzz_ea.c - libFuzzer target: FILE_FULL_EA_INFORMATION lists (MS-FSCC 2.4.15): every entry
 * reported lies inside the input, its name NUL-terminated in place. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fscc/fscc.h"
#include "fuzz_check.h"

struct bounds {
  const uint8_t *data;
  size_t size;
};

static int check(const struct fscc_ea *ea, void *arg) {
  const struct bounds *b = arg;
  fuzz_check_in((const uint8_t *)ea->name, ea->name_len + 1, b->data, b->size);
  fuzz_check_in(ea->value, ea->value_len, b->data, b->size);
  if (ea->name[ea->name_len] != 0 || strlen(ea->name) != ea->name_len) __builtin_trap();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct bounds b = {data, size};
  (void)fscc_ea_list_decode(data, size, check, &b);
  return 0;
}
