/* stats.c - the mount's counters as JSON: libsmb3's (smb3_stats_json, same keys) plus ours.
 * Read through the SMB3FS_IOC_STATS ioctl on the mount root (`smb3 stats MOUNTPOINT`), so nothing
 * appears in the share's namespace (smb3fs_ioctl.h says why not an xattr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "dfs.h"
#include "dirlease.h"
#include "openahead.h"
#include "stats.h"

char *stats_json(struct fs_ctx *fs) {
  struct smb3_stats s;
  smb3_get_stats(fs_conn(fs), &s);
  fs_dfs_add_stats(fs, &s); /* the DFS links' connections: their round trips are the mount's too */
  char *lib = smb3_stats_json(&s);
  if (!lib) return NULL;
  size_t n = strlen(lib);
  while (n && lib[n - 1] != '}')
    n--;
  if (!n) {
    free(lib);
    return NULL;
  }
  lib[n - 1] = 0; /* reopen the object */
  struct fs_counters *c = &fs->ctr;
  static const char *const cache_names[] = {"strict", "none", "loose"};
  char *out = NULL;
  int rc = asprintf(
      &out,
      "%s,\"rsize\":%u,\"wsize\":%u,\"cache\":\"%s\",\"actimeo\":%g,\"ro\":%d,\"readahead_hits\":%llu,"
      "\"readahead_misses\":%llu,\"readahead_wire_reads\":%llu,\"direct_reads\":%llu,"
      "\"readahead_piped\":%llu,"
      "\"writeback_hits\":%llu,\"writeback_wire_writes\":%llu,\"writeback_throttled\":%llu,"
      "\"writeback_errors\":%llu,\"direct_write_opens\":%llu,\"direct_read_opens\":%llu,"
      "\"lease_breaks\":%llu,"
      "\"invalidations\":%llu,\"outages\":%llu,\"reconnects\":%llu,\"reopens\":%llu,"
      "\"relocks\":%llu,\"relocks_lost\":%llu,\"data_mem\":%zu,\"data_mem_peak\":%zu,"
      "\"data_mem_cap\":%zu,\"data_mem_refused\":%llu,\"mem_trims\":%llu,\"times_deferred\":%"
      "llu,\"open_reads\":%llu,\"lookups_known_absent\":%llu,\"closes_batched\":%llu,\"creates_"
      "deferred\":%llu,"
      "\"setattrs_unchanged\":%llu,\"getattrs_held\":%llu,\"listings_kept\":%llu,"
      "\"lookups_listed\":%llu,\"relists\":%llu,\"listings_ahead\":%llu,\"dir_leases\":%llu,"
      "\"dir_lease_breaks\":%llu,\"dir_leases_held\":%d,\"opens_ahead\":%llu,\"opens_ahead_used\":%llu,"
      "\"opens_ahead_held\":%d}",
      lib, fs->rsize, fs->wsize, cache_names[fs->cache % 3], fs->actimeo, fs->ro,
      (unsigned long long)c->ra_hits, (unsigned long long)c->ra_misses, (unsigned long long)c->ra_wire_reads,
      (unsigned long long)c->direct_reads, (unsigned long long)c->ra_piped, (unsigned long long)c->wb_writes,
      (unsigned long long)c->wb_wire_writes, (unsigned long long)c->wb_throttled,
      (unsigned long long)c->wb_errors, (unsigned long long)c->direct_wr_opens,
      (unsigned long long)c->direct_rd_opens, (unsigned long long)c->lease_breaks,
      (unsigned long long)c->invalidations, (unsigned long long)c->outages, (unsigned long long)c->reconnects,
      (unsigned long long)c->reopens, (unsigned long long)c->relocks, (unsigned long long)c->relocks_lost,
      atomic_load(&fs->mem.used), atomic_load(&fs->mem.peak), fs->mem.cap,
      (unsigned long long)atomic_load(&fs->mem.refused), (unsigned long long)c->mem_trims,
      (unsigned long long)c->times_deferred, (unsigned long long)c->open_reads,
      (unsigned long long)c->lookups_known_absent, (unsigned long long)c->closes_batched,
      (unsigned long long)c->creates_deferred, (unsigned long long)c->setattrs_unchanged,
      (unsigned long long)c->getattrs_held, (unsigned long long)c->listings_kept,
      (unsigned long long)c->lookups_listed, (unsigned long long)c->relists,
      (unsigned long long)c->listings_ahead, (unsigned long long)c->dir_leases,
      (unsigned long long)c->dir_lease_breaks, dirlease_held(), (unsigned long long)c->opens_ahead,
      (unsigned long long)c->opens_ahead_used, oa_held(fs));
  free(lib);
  return rc < 0 ? NULL : out;
}
