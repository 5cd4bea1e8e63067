/* tamper.c - netsim's man-in-the-middle rules (tools/README.md, "netsim --rule").
 *
 * netsim hands every whole NBSS message (MS-SMB2 2.1: a zero byte and a 24-bit length, then the SMB2
 * message or the transform frame) of each direction to tamper_apply(), which finds the rules that
 * match it and applies their actions in order. Field locations are relative to the first SMB2 message
 * of the frame (a compound's later elements are reached with msg+OFF). A transform (encrypted) frame
 * can only be matched as cmd=transform and changed by msg+OFF actions, truncated, dropped or replayed:
 * its header and body are ciphertext. */
#include "tamper.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NBSS_LEN 4
#define SMB2_HDR 64
#define MAX_ACTIONS 8
#define HIST_MAX 256                   /* messages remembered per direction for replay */
#define HIST_MSG_MAX ((size_t)1 << 20) /* larger ones are counted but cannot be replayed */
#define CMD_ANY (-1)
#define CMD_TRANSFORM (-2)

enum loc_base { LOC_MSG, LOC_HDR, LOC_BODY, LOC_CTX };

struct field {
  enum loc_base base;
  uint16_t ctx_type; /* LOC_CTX: the negotiate context's ContextType (MS-SMB2 2.2.4.1) */
  uint32_t off;
  uint8_t width; /* 1, 2, 4 or 8 bytes, little-endian */
};

enum act_kind { ACT_OR, ACT_CLEAR, ACT_PUT, ACT_FLIP, ACT_UNSIGN, ACT_TRUNCATE, ACT_DROP, ACT_REPLAY };

struct action {
  enum act_kind kind;
  struct field f;
  uint64_t value; /* mask, value, bit number, kept length or message number (0 = same command) */
};

struct rule {
  enum tamper_dir dir;
  int cmd; /* SMB2 command, CMD_ANY or CMD_TRANSFORM */
  int has_status;
  uint32_t status;
  unsigned nth;    /* 0 = every match */
  uint64_t minlen; /* only messages at least this long (bytes after the NBSS header) */
  int after_setup;
  struct action act[MAX_ACTIONS];
  int nact;
  char text[256];
};

struct tamper {
  struct rule *rules;
  int n;
};

struct hist {
  uint8_t *buf; /* NULL: too large to keep */
  size_t len;
  int cmd;
};

struct tamper_conn {
  const struct tamper *t;
  unsigned long id;
  FILE *log;
  int trace;
  pthread_mutex_t lock;
  unsigned *count; /* per rule: matches so far */
  int established; /* a SESSION_SETUP success response has gone by */
  unsigned nmsg[2];
  struct hist hist[2][HIST_MAX];
};

static const char *const cmd_names[] = {
    "negotiate",       "session_setup", "logoff",     "tree_connect", "tree_disconnect", "create", "close",
    "flush",           "read",          "write",      "lock",         "ioctl",           "cancel", "echo",
    "query_directory", "change_notify", "query_info", "set_info",     "oplock_break"};
#define N_CMDS ((int)(sizeof cmd_names / sizeof cmd_names[0]))

/* Names for the fields the tests touch; offsets from MS-SMB2 2.2.1.2 (header), 2.2.4 (NEGOTIATE
 * response), 2.2.6 (SESSION_SETUP response), 2.2.10 (TREE_CONNECT response). */
static const struct alias {
  const char *name;
  struct field f;
} aliases[] = {
    {"status", {LOC_HDR, 0, 8, 4}},     {"command", {LOC_HDR, 0, 12, 2}},
    {"credits", {LOC_HDR, 0, 14, 2}},   {"flags", {LOC_HDR, 0, 16, 4}},
    {"msgid", {LOC_HDR, 0, 24, 8}},     {"sessid", {LOC_HDR, 0, 40, 8}},
    {"secmode", {LOC_BODY, 0, 2, 2}},   {"dialect", {LOC_BODY, 0, 4, 2}},
    {"ctxcount", {LOC_BODY, 0, 6, 2}},  {"caps", {LOC_BODY, 0, 24, 4}},
    {"sessflags", {LOC_BODY, 0, 2, 2}}, {"shareflags", {LOC_BODY, 0, 4, 4}},
    {"sharecaps", {LOC_BODY, 0, 8, 4}},
};

static const char *cmd_name(int cmd) {
  if (cmd == CMD_TRANSFORM) return "TRANSFORM";
  if (cmd >= 0 && cmd < N_CMDS) return cmd_names[cmd];
  return "?";
}

static int fail(char *err, size_t errlen, const char *what, const char *v) {
  snprintf(err, errlen, "%s '%s'", what, v);
  return -1;
}

static int parse_u64(const char *s, uint64_t *out) {
  char *end;
  if (!*s || *s == '-') return -1;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

/* FIELD: an alias, or BASE+OFF[/WIDTH] with BASE hdr, body, msg or ctxTYPE (TYPE as a number). The
 * text ends at the first ':' (what follows is the action's value). */
static int parse_field(const char *s, size_t n, struct field *f) {
  char buf[64];
  if (n >= sizeof buf) return -1;
  memcpy(buf, s, n);
  buf[n] = 0;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (!strcmp(buf, aliases[i].name)) return *f = aliases[i].f, 0;
  char *plus = strchr(buf, '+');
  if (!plus) return -1;
  *plus = 0;
  *f = (struct field){.width = 1};
  uint64_t v;
  if (!strcmp(buf, "hdr"))
    f->base = LOC_HDR;
  else if (!strcmp(buf, "body"))
    f->base = LOC_BODY;
  else if (!strcmp(buf, "msg"))
    f->base = LOC_MSG;
  else if (!strncmp(buf, "ctx", 3) && !parse_u64(buf + 3, &v) && v <= 0xFFFF)
    f->base = LOC_CTX, f->ctx_type = (uint16_t)v;
  else
    return -1;
  char *slash = strchr(plus + 1, '/');
  if (slash) {
    *slash = 0;
    if (parse_u64(slash + 1, &v) || (v != 1 && v != 2 && v != 4 && v != 8)) return -1;
    f->width = (uint8_t)v;
  }
  if (parse_u64(plus + 1, &v) || v > (1u << 24)) return -1;
  f->off = (uint32_t)v;
  return 0;
}

/* or=FIELD:MASK, clear=FIELD:MASK, put=FIELD:VALUE, flip=FIELD:BIT */
static int parse_field_action(struct action *a, const char *v) {
  const char *colon = v ? strrchr(v, ':') : NULL;
  if (!colon || parse_field(v, (size_t)(colon - v), &a->f) || parse_u64(colon + 1, &a->value)) return -1;
  if (a->kind == ACT_FLIP && a->value >= 8u * a->f.width) return -1;
  return 0;
}

static int parse_cmd(const char *v, int *cmd) {
  uint64_t n;
  if (!strcasecmp(v, "any")) return *cmd = CMD_ANY, 0;
  if (!strcasecmp(v, "transform")) return *cmd = CMD_TRANSFORM, 0;
  for (int i = 0; i < N_CMDS; i++)
    if (!strcasecmp(v, cmd_names[i])) return *cmd = i, 0;
  if (!parse_u64(v, &n) && n < 0xFFFF) return *cmd = (int)n, 0;
  return -1;
}

static int parse_item(struct rule *r, char *k, char *v, int *have_dir, char *err, size_t errlen) {
  static const struct {
    const char *name;
    enum act_kind kind;
  } acts[] = {{"or", ACT_OR},         {"clear", ACT_CLEAR},       {"put", ACT_PUT},   {"flip", ACT_FLIP},
              {"unsign", ACT_UNSIGN}, {"truncate", ACT_TRUNCATE}, {"drop", ACT_DROP}, {"replay", ACT_REPLAY}};
  uint64_t n;
  if (!strcmp(k, "dir")) {
    if (v && !strcmp(v, "c2s"))
      r->dir = TAMPER_C2S;
    else if (v && !strcmp(v, "s2c"))
      r->dir = TAMPER_S2C;
    else
      return fail(err, errlen, "bad dir (c2s or s2c)", v ? v : "");
    *have_dir = 1;
    return 0;
  }
  if (!strcmp(k, "cmd")) return v && !parse_cmd(v, &r->cmd) ? 0 : fail(err, errlen, "bad cmd", v ? v : "");
  if (!strcmp(k, "status")) {
    if (!v || parse_u64(v, &n) || n > 0xFFFFFFFFu) return fail(err, errlen, "bad status", v ? v : "");
    r->has_status = 1, r->status = (uint32_t)n;
    return 0;
  }
  if (!strcmp(k, "nth")) {
    if (!v || parse_u64(v, &n) || !n || n > 1000000) return fail(err, errlen, "bad nth", v ? v : "");
    r->nth = (unsigned)n;
    return 0;
  }
  if (!strcmp(k, "minlen"))
    return v && !parse_u64(v, &r->minlen) ? 0 : fail(err, errlen, "bad minlen", v ? v : "");
  if (!strcmp(k, "after-setup"))
    return v ? fail(err, errlen, "after-setup takes no value", v) : (r->after_setup = 1, 0);
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
    if (strcmp(k, acts[i].name)) continue;
    if (r->nact == MAX_ACTIONS) return fail(err, errlen, "too many actions in", r->text);
    struct action *a = &r->act[r->nact];
    *a = (struct action){.kind = acts[i].kind};
    int bad = 0;
    switch (a->kind) {
    case ACT_OR:
    case ACT_CLEAR:
    case ACT_PUT:
    case ACT_FLIP:
      bad = parse_field_action(a, v);
      break;
    case ACT_UNSIGN:
    case ACT_DROP:
      bad = v != NULL;
      break;
    case ACT_TRUNCATE:
      bad = !v || parse_u64(v, &a->value);
      break;
    case ACT_REPLAY: /* replay: the latest earlier message of the same command; replay=N: the Nth */
      bad = v && (parse_u64(v, &a->value) || !a->value || a->value > HIST_MAX);
      break;
    }
    if (bad) return fail(err, errlen, "bad action", v ? v : k);
    r->nact++;
    return 0;
  }
  return fail(err, errlen, "unknown rule item", k);
}

int tamper_rule_add(struct tamper **tp, const char *spec, char *err, size_t errlen) {
  struct rule r = {.cmd = CMD_ANY};
  if (strlen(spec) >= sizeof r.text) return fail(err, errlen, "rule too long", spec);
  snprintf(r.text, sizeof r.text, "%s", spec);
  char work[sizeof r.text];
  snprintf(work, sizeof work, "%s", spec);
  int have_dir = 0;
  char *save = NULL;
  for (char *item = strtok_r(work, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    if (eq) *eq = 0;
    if (parse_item(&r, item, eq ? eq + 1 : NULL, &have_dir, err, errlen)) return -1;
  }
  if (!have_dir) return fail(err, errlen, "rule needs dir=c2s or dir=s2c", spec);
  if (!r.nact) return fail(err, errlen, "rule has no action", spec);
  struct tamper *t = *tp;
  if (!t && !(t = *tp = tamper_new())) return fail(err, errlen, "out of memory for", spec);
  struct rule *nr = realloc(t->rules, (size_t)(t->n + 1) * sizeof *nr);
  if (!nr) return fail(err, errlen, "out of memory for", spec);
  t->rules = nr;
  t->rules[t->n++] = r;
  return 0;
}

struct tamper *tamper_new(void) {
  return calloc(1, sizeof(struct tamper));
}

void tamper_free(struct tamper *t) {
  if (!t) return;
  free(t->rules);
  free(t);
}

struct tamper_conn *tamper_conn_new(const struct tamper *t, unsigned long id, FILE *log, int trace) {
  struct tamper_conn *tc = calloc(1, sizeof *tc);
  if (!tc) return NULL;
  tc->count = calloc((size_t)t->n + 1, sizeof *tc->count);
  if (!tc->count) {
    free(tc);
    return NULL;
  }
  tc->t = t;
  tc->id = id;
  tc->log = log;
  tc->trace = trace;
  pthread_mutex_init(&tc->lock, NULL);
  return tc;
}

void tamper_conn_free(struct tamper_conn *tc) {
  if (!tc) return;
  for (int d = 0; d < 2; d++)
    for (int i = 0; i < HIST_MAX; i++)
      free(tc->hist[d][i].buf);
  pthread_mutex_destroy(&tc->lock);
  free(tc->count);
  free(tc);
}

static uint64_t le_get(const uint8_t *p, int w) {
  uint64_t v = 0;
  for (int i = w - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static void le_set(uint8_t *p, int w, uint64_t v) {
  for (int i = 0; i < w; i++, v >>= 8)
    p[i] = (uint8_t)v;
}

/* What the message is: its command (CMD_TRANSFORM for an encrypted frame, CMD_ANY for something
 * else) and, for a plain SMB2 message, its status. */
static int msg_cmd(const uint8_t *p, size_t n, uint32_t *status) {
  *status = 0;
  if (n >= 4 && p[0] == 0xFD && !memcmp(p + 1, "SMB", 3)) return CMD_TRANSFORM;
  if (n < SMB2_HDR || p[0] != 0xFE || memcmp(p + 1, "SMB", 3)) return CMD_ANY;
  *status = (uint32_t)le_get(p + 8, 4);
  return (int)le_get(p + 12, 2);
}

/* Absolute offset of a field in the payload p (n bytes), or -1 with the reason. */
static long field_at(const struct field *f, const uint8_t *p, size_t n, int cmd, const char **why) {
  size_t at;
  if (f->base != LOC_MSG && cmd < 0) return *why = "not a plain SMB2 message", -1;
  switch (f->base) {
  case LOC_MSG:
  case LOC_HDR:
    at = f->off;
    break;
  case LOC_BODY:
    at = SMB2_HDR + (size_t)f->off;
    break;
  case LOC_CTX: { /* MS-SMB2 2.2.4: NegotiateContextOffset (header-relative) and Count */
    if (cmd != 0 || n < SMB2_HDR + 64) return *why = "no negotiate contexts", -1;
    size_t off = (size_t)le_get(p + SMB2_HDR + 60, 4);
    unsigned count = (unsigned)le_get(p + SMB2_HDR + 6, 2);
    at = SIZE_MAX;
    for (unsigned i = 0; i < count && off + 8 <= n; i++) {
      if (i) off = (off + 7) & ~(size_t)7;
      if (off + 8 > n) break;
      if (le_get(p + off, 2) == f->ctx_type) {
        at = off + f->off;
        break;
      }
      off += 8 + (size_t)le_get(p + off + 2, 2);
    }
    if (at == SIZE_MAX) return *why = "no negotiate context of that type", -1;
    break;
  }
  default:
    return *why = "?", -1;
  }
  if (at + f->width > n) return *why = "beyond the end of the message", -1;
  return (long)at;
}

static void nbss_set_len(uint8_t *buf, size_t n) {
  buf[1] = (uint8_t)(n >> 16), buf[2] = (uint8_t)(n >> 8), buf[3] = (uint8_t)n;
}

/* Replaces *buf's message by h's copy. */
static int replay_from(const struct hist *h, uint8_t **buf, size_t *len, size_t *cap) {
  if (h->len > *cap) {
    uint8_t *nb = realloc(*buf, h->len);
    if (!nb) return -1;
    *buf = nb, *cap = h->len;
  }
  memcpy(*buf, h->buf, h->len);
  *len = h->len;
  return 0;
}

/* Applies one action; returns 1 = keep, 0 = drop, -1 = out of memory, -2 = not applicable (why). */
static int act_apply(struct tamper_conn *tc, enum tamper_dir dir, const struct action *a, uint8_t **buf,
                     size_t *len, size_t *cap, const char **why) {
  uint8_t *p = *buf + NBSS_LEN;
  size_t n = *len - NBSS_LEN;
  uint32_t status;
  int cmd = msg_cmd(p, n, &status);
  long at;
  switch (a->kind) {
  case ACT_OR:
  case ACT_CLEAR:
  case ACT_PUT:
  case ACT_FLIP: {
    if ((at = field_at(&a->f, p, n, cmd, why)) < 0) return -2;
    uint64_t v = le_get(p + at, a->f.width);
    v = a->kind == ACT_OR      ? v | a->value
        : a->kind == ACT_CLEAR ? v & ~a->value
        : a->kind == ACT_PUT   ? a->value
                               : v ^ ((uint64_t)1 << a->value);
    le_set(p + at, a->f.width, v);
    return 1;
  }
  case ACT_UNSIGN: /* MS-SMB2 2.2.1: SMB2_FLAGS_SIGNED (0x8) and the 16-byte Signature at 48 */
    if (cmd < 0) return *why = "not a plain SMB2 message", -2;
    le_set(p + 16, 4, le_get(p + 16, 4) & ~(uint64_t)8);
    memset(p + 48, 0, 16);
    return 1;
  case ACT_TRUNCATE:
    if (a->value >= n) return *why = "message not longer than that", -2;
    *len = NBSS_LEN + a->value;
    nbss_set_len(*buf, a->value);
    return 1;
  case ACT_DROP:
    return 0;
  case ACT_REPLAY: {
    unsigned seen = tc->nmsg[dir] - 1; /* earlier messages; the current one is the last recorded */
    const struct hist *h = NULL;
    if (a->value) {
      if (a->value > seen || a->value > HIST_MAX) return *why = "that message has not been seen", -2;
      h = &tc->hist[dir][a->value - 1];
    } else {
      for (unsigned i = seen < HIST_MAX ? seen : HIST_MAX; i-- > 0 && !h;)
        if (tc->hist[dir][i].cmd == cmd) h = &tc->hist[dir][i];
      if (!h) return *why = "no earlier message of that command", -2;
    }
    if (!h->buf) return *why = "that message was too large to keep", -2;
    return replay_from(h, buf, len, cap) ? -1 : 1;
  }
  }
  return -2;
}

static void hist_record(struct tamper_conn *tc, enum tamper_dir dir, const uint8_t *buf, size_t len,
                        int cmd) {
  unsigned i = tc->nmsg[dir]++;
  if (i >= HIST_MAX) return;
  struct hist *h = &tc->hist[dir][i];
  h->cmd = cmd;
  h->len = len;
  if (len <= HIST_MSG_MAX && (h->buf = malloc(len))) memcpy(h->buf, buf, len);
}

int tamper_apply(struct tamper_conn *tc, enum tamper_dir dir, uint8_t **buf, size_t *len, size_t *cap) {
  static const char *const dir_names[] = {"c2s", "s2c"};
  uint32_t status;
  int cmd = msg_cmd(*buf + NBSS_LEN, *len - NBSS_LEN, &status);
  pthread_mutex_lock(&tc->lock);
  hist_record(tc, dir, *buf, *len, cmd);
  unsigned num = tc->nmsg[dir];
  int established = tc->established;
  if (tc->trace && tc->log)
    fprintf(tc->log, "netsim: conn %lu %s #%u %s status 0x%08x flags 0x%08x len %zu\n", tc->id,
            dir_names[dir], num, cmd_name(cmd), status,
            cmd >= 0 ? (unsigned)le_get(*buf + NBSS_LEN + 16, 4) : 0u, *len - NBSS_LEN);
  int keep = 1;
  for (int i = 0; i < tc->t->n && keep == 1; i++) {
    const struct rule *r = &tc->t->rules[i];
    if (r->dir != dir || (r->cmd != CMD_ANY && r->cmd != cmd) || (r->after_setup && !established) ||
        (r->has_status && (cmd < 0 || r->status != status)) || *len - NBSS_LEN < r->minlen)
      continue;
    tc->count[i]++;
    if (r->nth && tc->count[i] != r->nth) continue;
    for (int k = 0; k < r->nact && keep == 1; k++) {
      const char *why = NULL;
      int rc = act_apply(tc, dir, &r->act[k], buf, len, cap, &why);
      if (rc == -2) {
        if (tc->log)
          fprintf(tc->log, "netsim: conn %lu %s #%u %s: rule %d action %d not applied: %s\n", tc->id,
                  dir_names[dir], num, cmd_name(cmd), i + 1, k + 1, why);
        continue;
      }
      keep = rc;
      if (rc >= 0 && tc->log)
        fprintf(tc->log, "netsim: conn %lu %s #%u %s: rule %d action %d fired (%s)\n", tc->id, dir_names[dir],
                num, cmd_name(cmd), i + 1, k + 1, r->text);
    }
  }
  /* After the rules: a SESSION_SETUP success response starts "after-setup" with the next message. */
  if (dir == TAMPER_S2C && cmd == 1 && status == 0) tc->established = 1;
  pthread_mutex_unlock(&tc->lock);
  if (tc->log) fflush(tc->log);
  return keep;
}
