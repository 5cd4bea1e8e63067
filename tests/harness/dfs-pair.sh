# Sourced by the DFS tests (tests/integration/cli_dfs.sh, tests/fs/fs_dfs.sh): two real smbds, since
# a referral names a server, not a port. Server A is the with-smbd the test runs under (its [test]
# share a DFS root: with-smbd --share "msdfs root = yes"); server B a second with-smbd started here
# on 127.0.0.3 with A's port and password (WITH_SMBD_ADDR/PASS/FIRST_PORT).
#
# dfs_pair SCRIPT [ARGS]: the first call, on server A: exports A_HOST A_PORT A_DIR A_PUB, makes in
# A's share the links both tests use (Samba's form: a symlink to "msdfs:SERVER\SHARE[\PATH],...")
#   other  -> 127.0.0.1\public      another share of the same server
#   remote -> 127.0.0.3\test        another server
#   loop   -> 127.0.0.1\test\loop   a link to itself
# and what the caller's dfs_more_links (run in A_DIR) adds, gives A's files to the share's user, and
# runs SCRIPT --inner under server B (never returns). Called with --inner (on server B): checks
# that B is where the links point and sets B_DIR; the caller sources its lib.sh first.
dfs_pair() {
  if [ "${2:-}" != --inner ]; then
    A_HOST=$SMB3_TEST_HOST A_PORT=$SMB3_TEST_PORT A_DIR=$SMB3_TEST_SHARE_DIR A_PUB=$SMB3_TEST_GUEST_DIR
    export A_HOST A_PORT A_DIR A_PUB
    cd "$A_DIR" || exit 1
    ln -s 'msdfs:127.0.0.1\public' other
    ln -s 'msdfs:127.0.0.3\test' remote
    ln -s 'msdfs:127.0.0.1\test\loop' loop
    if declare -F dfs_more_links >/dev/null; then dfs_more_links || exit 1; fi
    chown -R "$SMB3_TEST_USER:" "$A_DIR"
    WITH_SMBD_ADDR=127.0.0.3 WITH_SMBD_PASS=$SMB3_TEST_PASS WITH_SMBD_FIRST_PORT=$A_PORT \
      exec "$(dirname "${BASH_SOURCE[0]}")/with-smbd" -- "$1" --inner
  fi
  if [ "$SMB3_TEST_PORT" != "$A_PORT" ] || [ "$SMB3_TEST_HOST" != 127.0.0.3 ]; then
    echo "server B is on $SMB3_TEST_HOST:$SMB3_TEST_PORT, not 127.0.0.3:$A_PORT (port taken?)"
    exit 1
  fi
  B_DIR=$SMB3_TEST_SHARE_DIR
}
