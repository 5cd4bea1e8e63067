/* tamper.h - netsim's man-in-the-middle rules: match SMB2 messages of one direction and change,
 * truncate, drop or replay them (syntax: tools/README.md, "netsim --rule"). */
#ifndef SMB3_TOOLS_TAMPER_H
#define SMB3_TOOLS_TAMPER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum tamper_dir { TAMPER_C2S = 0, TAMPER_S2C = 1 };

struct tamper;      /* the rules of the command line */
struct tamper_conn; /* per connection: occurrence counters, the messages seen, session state */

/* Parses one rule and appends it to *t (allocated on first use). Returns 0, or -1 with a one-line
 * reason in err. */
int tamper_rule_add(struct tamper **t, const char *spec, char *err, size_t errlen);
/* An empty rule set (netsim --trace alone: pass every message, log it). */
struct tamper *tamper_new(void);
void tamper_free(struct tamper *t);

/* log: where fired rules (and, with trace, every message) are reported; NULL = nowhere. */
struct tamper_conn *tamper_conn_new(const struct tamper *t, unsigned long id, FILE *log, int trace);
void tamper_conn_free(struct tamper_conn *tc);

/* One whole NBSS message (4-byte header + payload) of direction dir in *buf (malloc'd, *cap bytes,
 * *len used): applies the matching rules in place, possibly replacing or reallocating *buf.
 * Returns 1 to forward the (changed) message, 0 to drop it, -1 when out of memory. Thread-safe per
 * connection (both directions call it). */
int tamper_apply(struct tamper_conn *tc, enum tamper_dir dir, uint8_t **buf, size_t *len, size_t *cap);

#endif
