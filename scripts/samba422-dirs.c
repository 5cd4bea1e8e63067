/*
 * samba422-dirs.so: LD_PRELOADed by the wrappers that scripts/samba422.sh writes into a Samba 4.22
 * tree (DIR/bin/smbd, smbclient, ...). Samba finds its loadable modules (gensec/krb5.so, auth/,
 * vfs/, ldb/) and its helpers (samba-dcerpcd, rpcd_*) in directories compiled into
 * libsamba-util, which for Debian's build are the system's (/usr/lib/<multiarch>/samba,
 * /usr/libexec/samba): those hold Samba 4.17, whose modules must not be loaded into a 4.22
 * process. Before main() this points both at the tree, through libsamba-util's own setters
 * (set_dyn_MODULESDIR, set_dyn_SAMBA_LIBEXECDIR), found with dlsym so that a program that does not
 * link libsamba-util is left alone. The tree is the directory above the one holding this file.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SAMBA422_MULTIARCH
#define SAMBA422_MULTIARCH "x86_64-linux-gnu"
#endif

typedef const char *(*dyn_setter)(const char *);

static void dyn_set(const char *setter, const char *root, const char *sub) {
  dyn_setter set = (dyn_setter)dlsym(RTLD_DEFAULT, setter);
  char path[4096];
  if (!set) return;
  if (snprintf(path, sizeof path, "%s/%s", root, sub) >= (int)sizeof path) return;
  if (!set(path)) fprintf(stderr, "samba422-dirs: %s(%s) failed\n", setter, path);
}

__attribute__((constructor)) static void dirs_redirect(void) {
  Dl_info info;
  char root[4096];
  char *slash;
  if (!dladdr((void *)dirs_redirect, &info) || !info.dli_fname || info.dli_fname[0] != '/') return;
  if (snprintf(root, sizeof root, "%s", info.dli_fname) >= (int)sizeof root) return;
  /* <root>/preload/samba422-dirs.so */
  for (int up = 0; up < 2; up++) {
    slash = strrchr(root, '/');
    if (!slash || slash == root) return;
    *slash = '\0';
  }
  dyn_set("set_dyn_MODULESDIR", root, "usr/lib/" SAMBA422_MULTIARCH "/samba");
  dyn_set("set_dyn_SAMBA_LIBEXECDIR", root, "usr/libexec/samba");
}
