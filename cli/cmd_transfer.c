/* cmd_transfer.c - get, put, cat: whole-file transfers through the pipelined bulk engine; cp: a
 * copy inside the share by the server. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static int write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -errno;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

struct fd_sink {
  int fd;
  int err; /* errno of a failed local write */
};

static int sink_fd(const void *buf, size_t n, uint64_t off, void *arg) {
  (void)off;
  struct fd_sink *s = arg;
  int rc = write_all(s->fd, buf, n);
  if (rc) {
    s->err = -rc;
    return SMB3_EIO;
  }
  return 0;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* The URL of a file (with a path): cli_parse, and the path checked. */
static int parse_file_url(struct cli *cli, const char *cmd, const char *url) {
  int rc = cli_parse(cli, cmd, url);
  if (rc) return rc;
  if (!cli->opts.path[0]) return cli_usage_error(cmd, "no file path in URL '%s'", url);
  return CLI_OK;
}

/* Connect and open the parsed URL's file for reading; st gets its size. Nonzero: the exit status
 * (message printed). */
static int open_remote(struct cli *cli, const char *cmd, smb3_file **f, struct smb3_stat *st) {
  int rc = cli_connect(cli, cmd);
  if (rc) return rc;
  rc = smb3_open(cli->client, cli->opts.path, O_RDONLY, f, st);
  if (rc) return cli_fail(cli, cmd, rc);
  if (st->is_dir) {
    smb3_close(*f);
    return cli_error(cmd, "'%s' is a directory", cli->opts.path);
  }
  return 0;
}

int cmd_cat(struct cli *cli, int argc, char **argv) {
  (void)argc;
  smb3_file *f;
  struct smb3_stat st;
  int orc = parse_file_url(cli, "cat", argv[0]);
  if (orc || (orc = open_remote(cli, "cat", &f, &st))) return orc;
  struct fd_sink s = {1, 0};
  int64_t n =
      smb3_read_stream(f, 0, st.size, sink_fd, &s, NULL, NULL); /* size at open: no READs past the end */
  int crc = smb3_close(f);
  if (n < 0 && s.err) return cli_error("cat", "standard output: %s", strerror(s.err));
  if (n < 0) return cli_fail(cli, "cat", (int)n);
  if (crc) return cli_fail(cli, "cat", crc);
  return 0;
}

int cmd_get(struct cli *cli, int argc, char **argv) {
  if (cli->recursive) return cmd_get_tree(cli, argc, argv);
  smb3_file *f;
  struct smb3_stat st;
  int orc = parse_file_url(cli, "get", argv[0]);
  if (orc || (orc = open_remote(cli, "get", &f, &st))) return orc;
  char local[4096];
  const char *dst = argc == 2 ? argv[1] : base_name(cli->opts.path);
  struct stat ls;
  if (stat(dst, &ls) == 0 && S_ISDIR(ls.st_mode))
    snprintf(local, sizeof local, "%s/%s", dst, base_name(cli->opts.path));
  else
    snprintf(local, sizeof local, "%s", dst);
  /* Never leave a truncated file that looks complete: write a temporary name, rename at the end. */
  char tmp[4200];
  char dircopy[4096];
  snprintf(dircopy, sizeof dircopy, "%s", local);
  snprintf(tmp, sizeof tmp, "%s/.%s.smb3-XXXXXX", dirname(dircopy), base_name(local));
  int fd = mkstemp(tmp);
  if (fd < 0) {
    smb3_close(f);
    return cli_error("get", "cannot create '%s': %s", tmp, strerror(errno));
  }
  struct progress p;
  progress_start(&p, cli, st.size);
  struct fd_sink s = {fd, 0};
  int64_t n = smb3_read_stream(f, 0, st.size, sink_fd, &s, progress_update, &p);
  progress_end(&p, n > 0 ? (uint64_t)n : 0);
  int crc = smb3_close(f);
  int rc = 0;
  if (n < 0 && s.err)
    rc = cli_error("get", "%s: %s", local, strerror(s.err));
  else if (n < 0)
    rc = cli_fail(cli, "get", (int)n);
  else if (crc)
    rc = cli_fail(cli, "get", crc);
  else {
    mode_t um = umask(0); /* mkstemp made it 0600; give it the mode a new file would get */
    umask(um);
    if (fchmod(fd, 0666 & ~um) || fsync(fd)) rc = cli_error("get", "%s: %s", local, strerror(errno));
  }
  if (close(fd) && !rc) rc = cli_error("get", "%s: %s", local, strerror(errno));
  if (!rc && rename(tmp, local)) rc = cli_error("get", "cannot rename to '%s': %s", local, strerror(errno));
  if (rc) unlink(tmp);
  return rc;
}

struct fd_source {
  int fd;
  int err;
};

static ssize_t source_fd(void *buf, size_t n, uint64_t off, void *arg) {
  (void)off;
  struct fd_source *s = arg;
  size_t got = 0;
  while (got < n) { /* fill completely: a short fill tells the engine the source is exhausted */
    ssize_t r = read(s->fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      s->err = errno;
      return SMB3_EIO;
    }
    if (r == 0) break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

/* Remote destination path: URL path, or URL dir + local base name when it ends in '/' or is a dir. */
static int put_target(struct cli *cli, const char *url, const char *local, char *out, size_t n) {
  const char *path = cli->opts.path;
  size_t ul = strlen(url);
  struct smb3_stat st;
  int is_dir =
      !path[0] || (ul && url[ul - 1] == '/') || (smb3_stat(cli->client, path, &st) == 0 && st.is_dir);
  if (is_dir)
    snprintf(out, n, "%s%s%s", path, path[0] ? "/" : "", base_name(local));
  else
    snprintf(out, n, "%s", path);
  return 0;
}

/* A failed create of the temporary name, told with the name the user asked for (the library's message
 * names the temporary one: "open '<tmp>': <reason>"; the reason is kept). what: "create" or "open". */
static int create_failed(struct cli *cli, const char *cmd, const char *what, const char *target, int rc) {
  const char *msg = smb3_last_error(cli->client), *r = msg ? strstr(msg, "': ") : NULL;
  return cli_error(cmd, "cannot %s '%s': %s", what, target, r ? r + 3 : smb3_strerror(rc));
}

/* The temporary name a remote file is written under before it is renamed to target: hidden, in
 * the same directory. */
static void temp_name(const char *target, unsigned r, char *tmp, size_t n) {
  const char *slash = strrchr(target, '/');
  if (slash)
    snprintf(tmp, n, "%.*s/.%s.smb3-%08x", (int)(slash - target), target, slash + 1, r);
  else
    snprintf(tmp, n, ".%s.smb3-%08x", target, r);
}

/* The data of LOCAL (fd, ls) into the open remote file f from offset 0: a regular file from the page
 * cache (sendfile), anything else through buffers. Returns the bytes written or SMB3_E*; a local read
 * error is left in s->err. */
static int64_t put_data(struct cli *cli, smb3_file *f, int fd, const struct stat *ls, struct fd_source *s) {
  struct progress p;
  progress_start(&p, cli, (uint64_t)ls->st_size);
  /* (/proc and /sys files have no blocks and a size that is not their length: read to EOF) */
  int sendable = S_ISREG(ls->st_mode) && ls->st_size > 0 && ls->st_blocks > 0;
  int64_t n = sendable ? smb3_write_from_fd(f, 0, fd, 0, (uint64_t)ls->st_size, progress_update, &p)
                       : smb3_write_stream(f, 0, source_fd, s, progress_update, &p);
  progress_end(&p, n > 0 ? (uint64_t)n : 0);
  return n;
}

/* The default: the data goes to a temporary name, renamed over target once complete. A failure
 * leaves target as it was; while it runs the share holds both files, and the result is a new
 * file (the old one's hard links, EAs and security descriptor are not carried over). */
static int put_atomic(struct cli *cli, const char *local, int fd, const struct stat *ls, const char *target) {
  char tmp[4200];
  temp_name(target, (unsigned)getpid() ^ (unsigned)ls->st_ino, tmp, sizeof tmp);
  smb3_file *f;
  int rc = smb3_open(cli->client, tmp, O_WRONLY | O_CREAT | O_TRUNC, &f, NULL);
  if (rc) return create_failed(cli, "put", "create", target, rc);
  struct fd_source s = {fd, 0};
  int64_t n = put_data(cli, f, fd, ls, &s);
  int crc = smb3_close(f); /* the server acknowledged every WRITE; close reports late failures */
  int out = 0;
  if (n < 0 && s.err)
    out = cli_error("put", "%s: %s", local, strerror(s.err));
  else if (n < 0)
    out = cli_fail(cli, "put", (int)n);
  else if (crc)
    out = cli_fail(cli, "put", crc);
  else if ((rc = smb3_rename(cli->client, tmp, target, 1)))
    out = cli_fail(cli, "put", rc);
  if (out) smb3_unlink(cli->client, tmp); /* best effort: no partial file left behind */
  return out;
}

/* A failure of put --inplace after target was opened for writing: its size may have been set and
 * some of the data written, so the message says the file is partly written. */
static int inplace_failed(const char *target, const char *why) {
  return cli_error("put --inplace", "%s; '%s' on the share is partly written", why[0] ? why : "failed",
                   target);
}

/* The client's last error message into buf (empty when there is none). */
static void last_error_copy(struct cli *cli, char *buf, size_t n) {
  const char *msg = smb3_last_error(cli->client);
  snprintf(buf, n, "%s", msg ? msg : "");
}

/* --inplace: the data is written into target itself (created if missing), which keeps its file id,
 * hard links, EAs and security descriptor and needs no room for a second copy; a failure leaves it
 * partly written. */
static int put_inplace(struct cli *cli, const char *local, int fd, const struct stat *ls,
                       const char *target) {
  smb3_file *f;
  struct smb3_stat st;
  int rc = smb3_open(cli->client, target, O_WRONLY | O_CREAT, &f, &st);
  if (rc) return create_failed(cli, "put --inplace", "open or create", target, rc);
  if (st.is_dir) {
    smb3_close(f);
    return cli_error("put --inplace", "'%s' is a directory", target);
  }
  /* A regular file's length is known: the size is set to it before the data (SET_INFO
   * FileEndOfFileInformation, MS-SMB2 2.2.39), which drops a longer old file's tail up front (the
   * server frees it once, not while the data arrives) and lets an equal-sized one be overwritten
   * without growing or shrinking it; when the file is growing it tells the server the final size
   * at once. Anything else (a pipe) is cut to the length written afterwards. */
  uint64_t size = st.size;
  int known = S_ISREG(ls->st_mode) && ls->st_blocks > 0;
  if (known && size != (uint64_t)ls->st_size) {
    if ((rc = smb3_ftruncate(f, (uint64_t)ls->st_size))) {
      char why[4400];
      last_error_copy(cli, why, sizeof why);
      smb3_close(f);
      return inplace_failed(target, why);
    }
    size = (uint64_t)ls->st_size;
  }
  struct fd_source s = {fd, 0};
  int64_t n = put_data(cli, f, fd, ls, &s);
  char why[4400] = "";
  if (n < 0 && s.err)
    snprintf(why, sizeof why, "%s: %s", local, strerror(s.err));
  else if (n < 0)
    rc = (int)n;
  else if ((uint64_t)n != size) /* a pipe, or a local file whose length changed meanwhile */
    rc = smb3_ftruncate(f, (uint64_t)n);
  if (rc && !why[0]) last_error_copy(cli, why, sizeof why);
  int crc = smb3_close(f); /* reports late failures of the WRITEs */
  if (crc && !why[0]) last_error_copy(cli, why, sizeof why);
  return why[0] || rc || crc ? inplace_failed(target, why) : 0;
}

int cmd_put(struct cli *cli, int argc, char **argv) {
  if (cli->recursive && cli->inplace) return cli_usage_error("put", "-r and --inplace cannot be combined");
  if (cli->recursive) return cmd_put_tree(cli, argc, argv);
  const char *cmd = cli->inplace ? "put --inplace" : "put";
  int rc = cli_parse(cli, cmd, argv[1]);
  if (rc) return rc;
  int fd = open(argv[0], O_RDONLY);
  if (fd < 0) return cli_error(cmd, "cannot open '%s': %s", argv[0], strerror(errno));
  struct stat ls;
  if (fstat(fd, &ls) || S_ISDIR(ls.st_mode)) {
    close(fd);
    return cli_error(cmd, "'%s' is not a regular file", argv[0]);
  }
  rc = cli_connect(cli, cmd);
  if (!rc) {
    char target[4096];
    put_target(cli, argv[1], argv[0], target, sizeof target);
    rc =
        cli->inplace ? put_inplace(cli, argv[0], fd, &ls, target) : put_atomic(cli, argv[0], fd, &ls, target);
  }
  close(fd);
  return rc;
}

/* A copy through this client, for servers that cannot copy themselves. */
static int sink_remote(const void *buf, size_t n, uint64_t off, void *arg) {
  ssize_t w = smb3_write_range(arg, buf, n, off);
  return w < 0 ? (int)w : 0;
}

#define CP_STEP (256u << 20) /* bytes per server-side copy call: the progress bar moves in these */

int cmd_cp(struct cli *cli, int argc, char **argv) {
  if (cli->recursive) return cmd_cp_tree(cli, argc, argv);
  smb3_file *src, *dst;
  struct smb3_stat st, ts;
  char to[4096], target[4200], tmp[4400];
  int rc = parse_file_url(cli, "cp", argv[0]);
  if (rc || (rc = cli_same_share_path(cli, "cp", argv[1], to, sizeof to))) return rc;
  if ((rc = open_remote(cli, "cp", &src, &st))) return rc;
  if ((rc = cli_dfs_rebase(cli, "cp", to, sizeof to))) {
    smb3_close(src);
    return rc;
  }
  size_t al = strlen(argv[1]);
  int is_dir = !to[0] || argv[1][al - 1] == '/' || (smb3_stat(cli->client, to, &ts) == 0 && ts.is_dir);
  size_t tl = strlen(to);
  while (tl && to[tl - 1] == '/')
    to[--tl] = 0;
  if (is_dir)
    snprintf(target, sizeof target, "%s%s%s", to, tl ? "/" : "", base_name(cli->opts.path));
  else
    snprintf(target, sizeof target, "%s", to);
  if (!strcmp(target, cli->opts.path)) {
    smb3_close(src);
    return cli_error("cp", "'%s' and '%s' are the same file", cli->opts.path, target);
  }
  temp_name(target, (unsigned)getpid() ^ (unsigned)st.ino, tmp, sizeof tmp);
  rc = smb3_open(cli->client, tmp, O_WRONLY | O_CREAT | O_TRUNC, &dst, NULL);
  if (rc) {
    smb3_close(src);
    return create_failed(cli, "cp", "create", target, rc);
  }
  struct progress p;
  progress_start(&p, cli, st.size);
  uint64_t done = 0;
  int64_t n = 0;
  while (done < st.size) { /* the server copies; a source that shrank meanwhile ends it early (n == 0) */
    n = smb3_copy_range(src, done, dst, done, st.size - done < CP_STEP ? st.size - done : CP_STEP);
    if (n <= 0) break;
    done += (uint64_t)n;
    progress_update(done, &p);
  }
  if (n == SMB3_ENOTSUP && done == 0) { /* a server that cannot copy: through this client */
    n = smb3_read_stream(src, 0, st.size, sink_remote, dst, progress_update, &p);
    if (n > 0) done = (uint64_t)n;
  }
  progress_end(&p, done);
  int src_rc = smb3_close(src);
  int dst_rc = smb3_close(dst);
  int out = 0;
  if (n < 0)
    out = cli_fail(cli, "cp", (int)n);
  else if (dst_rc)
    out = cli_fail(cli, "cp", dst_rc);
  else if (src_rc)
    out = cli_fail(cli, "cp", src_rc);
  else if ((rc = smb3_rename(cli->client, tmp, target, 1)))
    out = cli_fail(cli, "cp", rc);
  if (out) smb3_unlink(cli->client, tmp); /* best effort: no partial file left behind */
  return out;
}
