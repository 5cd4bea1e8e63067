/* Runs a libFuzzer target without libFuzzer: every file of the corpus directory given as argv[1],
 * then pseudo-random mutations of each (deterministic seed; fewer for long seeds), so that ctest
 * exercises every decoder on hostile input in ordinary (and sanitizer) builds. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)rng_state;
}

/* 2000 mutations of a seed up to 4 KiB; fewer of a longer one (a whole captured connection for
 * fuzz_core), so that the replay's time grows with the corpus's bytes no faster than linearly. */
static int mutations_for(size_t n) {
  if (n <= 4096) return 2000;
  size_t k = 2000 * (size_t)4096 / n;
  return k < 200 ? 200 : (int)k;
}

static void run_mutations(const uint8_t *seed, size_t n) {
  uint8_t *buf = malloc(n + 64);
  if (!buf) return;
  int count = mutations_for(n);
  for (int i = 0; i < count; i++) {
    size_t len = n;
    memcpy(buf, seed, n);
    int flips = 1 + (int)(rng() % 8);
    for (int k = 0; k < flips && len; k++)
      buf[rng() % len] = (uint8_t)rng();
    if (rng() % 4 == 0) len = rng() % (n + 1);
    if (rng() % 8 == 0 && len + 16 <= n + 64) {
      for (int k = 0; k < 16; k++)
        buf[len + k] = (uint8_t)rng();
      len += 16;
    }
    uint8_t *exact = malloc(len ? len : 1); /* exact-size copy so ASan sees overreads */
    if (!exact) break;
    memcpy(exact, buf, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
  }
  free(buf);
}

int main(int argc, char **argv) {
  int files = 0;
  if (argc > 1) {
    DIR *d = opendir(argv[1]);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
      FILE *f = fopen(path, "rb");
      if (!f) continue;
      uint8_t *data = malloc(1 << 20);
      size_t n = data ? fread(data, 1, 1 << 20, f) : 0;
      fclose(f);
      if (!data) continue;
      uint8_t *exact = malloc(n ? n : 1);
      if (exact) {
        memcpy(exact, data, n);
        LLVMFuzzerTestOneInput(exact, n);
        run_mutations(exact, n);
        free(exact);
      }
      free(data);
      files++;
    }
    if (d) closedir(d);
  }
  /* Random inputs of assorted sizes even without a corpus. */
  for (int i = 0; i < 5000; i++) {
    size_t len = rng() % 512;
    uint8_t *b = malloc(len ? len : 1);
    if (!b) break;
    for (size_t k = 0; k < len; k++)
      b[k] = (uint8_t)rng();
    LLVMFuzzerTestOneInput(b, len);
    free(b);
  }
  printf("%d corpus files, mutations and random inputs ran without a crash\n", files);
  return 0;
}
