/* test_nameset.c - a directory's names as the server compares them (fs/nameset.c): found in any
 * ASCII case, gone when deleted as spelt (two spellings are two files on a POSIX share: removing
 * one leaves the other), non-ASCII names never reported absent, many names (the table grows), and
 * the count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "nameset.h"

static void test_case_blind(void **state) {
  (void)state;
  struct nameset *s = nameset_new();
  assert_non_null(s);
  assert_int_equal(nameset_may_have(s, "a.h"), 0);
  assert_int_equal(nameset_add(s, "Makefile"), 0);
  assert_int_equal(nameset_may_have(s, "Makefile"), 1);
  assert_int_equal(nameset_may_have(s, "makefile"), 1);
  assert_int_equal(nameset_may_have(s, "MAKEFILE"), 1);
  assert_int_equal(nameset_may_have(s, "Makefil"), 0);
  assert_int_equal(nameset_may_have(s, "Makefiles"), 0);
  assert_int_equal(nameset_add(s, "Makefile"), 0); /* the same spelling: no-op */
  assert_int_equal(nameset_count(s), 1);
  nameset_del(s, "Makefile");
  assert_int_equal(nameset_may_have(s, "Makefile"), 0);
  assert_int_equal(nameset_count(s), 0);
  nameset_del(s, "absent"); /* no-op */
  nameset_free(s);
}

static void test_case_pairs(void **state) {
  (void)state;
  struct nameset *s = nameset_new();
  assert_non_null(s);
  /* one file for a Windows share, two on a POSIX share (xt_CONNMARK.h, xt_connmark.h) */
  assert_int_equal(nameset_add(s, "xt_CONNMARK.h"), 0);
  assert_int_equal(nameset_add(s, "xt_connmark.h"), 0);
  assert_int_equal(nameset_count(s), 2);
  nameset_del(s, "xt_CONNMARK.h"); /* POSIX: the other is still there */
  assert_int_equal(nameset_may_have(s, "xt_connmark.h"), 1);
  assert_int_equal(nameset_may_have(s, "XT_CONNMARK.H"), 1);
  nameset_del(s, "Xt_Connmark.h"); /* another spelling: nothing removed (the server is asked) */
  assert_int_equal(nameset_may_have(s, "xt_connmark.h"), 1);
  nameset_del(s, "xt_connmark.h");
  assert_int_equal(nameset_may_have(s, "xt_connmark.h"), 0);
  assert_int_equal(nameset_count(s), 0);
  nameset_free(s);
}

static void test_non_ascii_asks_the_server(void **state) {
  (void)state;
  struct nameset *s = nameset_new();
  assert_non_null(s);
  /* "É" and "é" are one name for the server (Unicode case folding): never answered as absent */
  assert_int_equal(nameset_may_have(s, "\xc3\x89t\xc3\xa9"), 1);
  assert_int_equal(nameset_add(s, "\xc3\xa9t\xc3\xa9"), 0);
  assert_int_equal(nameset_may_have(s, "\xc3\xa9t\xc3\xa9"), 1);
  assert_int_equal(nameset_may_have(s, "ete"), 0);
  nameset_free(s);
}

static void test_many_names(void **state) {
  (void)state;
  struct nameset *s = nameset_new();
  assert_non_null(s);
  char n[32];
  for (int i = 0; i < 5000; i++) {
    snprintf(n, sizeof n, "File%d.c", i);
    assert_int_equal(nameset_add(s, n), 0);
  }
  assert_int_equal(nameset_count(s), 5000);
  for (int i = 0; i < 5000; i += 2) {
    snprintf(n, sizeof n, "File%d.c", i);
    nameset_del(s, n);
  }
  assert_int_equal(nameset_count(s), 2500);
  for (int i = 0; i < 5000; i++) {
    snprintf(n, sizeof n, "FILE%d.c", i);
    assert_int_equal(nameset_may_have(s, n), i % 2);
  }
  assert_int_equal(nameset_may_have(s, "File5000.c"), 0);
  nameset_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_case_blind),
      cmocka_unit_test(test_case_pairs),
      cmocka_unit_test(test_non_ascii_asks_the_server),
      cmocka_unit_test(test_many_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
