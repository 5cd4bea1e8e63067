#!/usr/bin/env bash
# Run with the server limited to SMB 2.1: pinning 3.x fails clearly, 2.x works, the default
# negotiates down.
source "$(dirname "$0")/lib.sh"
U=$SMB3_TEST_URL
echo hi >"$SMB3_TEST_SHARE_DIR/hi.txt"
check_fails "vers=3.1.1 against a 2.1 server" "dialect" $SMB3 -o vers=3.1.1 cat "$U/hi.txt"
check_fails "vers=3.0 against a 2.1 server" "dialect" $SMB3 -o vers=3.0 cat "$U/hi.txt"
check "vers=2.1 works" $SMB3 -o vers=2.1 cat "$U/hi.txt"
check "default negotiates down" $SMB3 cat "$U/hi.txt"
finish
