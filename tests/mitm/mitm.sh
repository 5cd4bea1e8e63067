#!/usr/bin/env bash
# mitm.sh CASE - one man-in-the-middle attack (issue 18), run under tests/harness/with-smbd with the
# server options the case needs (tests/mitm/CMakeLists.txt). smb3 talks to smbd through
# `netsim --rule ...` (tools/README.md) on loopback. Each case first runs the same command through the
# relay without the rule (it must work, so a refusal is the attack's doing), then with the rule: the
# client must exit non-zero within 60 s with one error line naming the cause, and the relay's log must
# show that the rule fired.
source "$(dirname "$0")/../integration/lib.sh"
NETSIM=${NETSIM:?NETSIM=path to netsim}
CASE=${1:?usage: mitm.sh CASE}
NS_PID=

stop_relay() {
  if [ -n "$NS_PID" ]; then
    kill "$NS_PID" 2>/dev/null
    wait "$NS_PID" 2>/dev/null
    NS_PID=
    # an ASan/UBSan build of netsim reports on its stderr as it exits
    if grep -qE "ERROR: [A-Za-z]*Sanitizer|runtime error" "$WORK/relay.log"; then
      bad "netsim sanitizer report: $(grep -m3 -E "Sanitizer|runtime error" "$WORK/relay.log")"
    fi
  fi
  return 0
}
trap 'stop_relay; rm -rf "$WORK"' EXIT

# start_relay RULE...: netsim between us and smbd; sets RPORT, logs to $WORK/relay.log
start_relay() {
  local args=() r
  for r in "$@"; do args+=(--rule "$r"); done
  stop_relay
  rm -f "$WORK/relay.out" "$WORK/relay.log" # the new relay's files, not the last one's
  "$NETSIM" --listen 127.0.0.1:0 --to "127.0.0.1:$SMB3_TEST_PORT" --trace "${args[@]}" \
    >"$WORK/relay.out" 2>"$WORK/relay.log" &
  NS_PID=$!
  local i
  RPORT=
  for i in $(seq 200); do # its first stdout line, flushed once it listens
    RPORT=$(sed -n 's/^listening .*:\([0-9]*\)$/\1/p' "$WORK/relay.out" 2>/dev/null)
    [ -n "$RPORT" ] && break
    kill -0 "$NS_PID" 2>/dev/null || break
    sleep 0.05
  done
  [ -n "$RPORT" ] || { bad "netsim did not start: $(cat "$WORK/relay.log")"; finish; exit 1; }
}

# url [SHARE] [anon]: the test share through the relay
url() {
  local share=${1:-$SMB3_TEST_SHARE}
  if [ "${2:-}" = anon ]; then
    echo "smb://127.0.0.1:$RPORT/$share"
  else
    echo "smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@127.0.0.1:$RPORT/$share"
  fi
}

# attack NAME PATTERN "SMB3 ARGS (URL written @URL@)" RULE...: the command works through a plain relay,
# and fails with one line matching PATTERN once the rules are in; every rule fired.
attack() {
  local name=$1 pat=$2 cmd=$3
  shift 3
  start_relay
  local plain=${cmd//@URL@/$(url)}
  # shellcheck disable=SC2086
  check "$name: works without the attack" $SMB3 $plain
  start_relay "$@"
  local hostile=${cmd//@URL@/$(url)}
  # shellcheck disable=SC2086
  check_fails "$name" "$pat" $SMB3 $hostile
  local n
  for n in $(seq $#); do
    if grep -q "rule $n action [0-9]* fired" "$WORK/relay.log"; then
      ok "$name: rule $n fired"
    else
      bad "$name: rule $n never fired (the attack did not happen): $(grep -v ' #' "$WORK/relay.log" | head -5)"
    fi
  done
  stop_relay
}

echo "hello through the relay" >"$SMB3_TEST_SHARE_DIR/hi.txt"
chown "$SMB3_TEST_USER:" "$SMB3_TEST_SHARE_DIR/hi.txt"
CAT='cat @URL@/hi.txt'
NEG='dir=s2c,cmd=negotiate'
# The final SESSION_SETUP response, and the n-th response after it.
SETUP='dir=s2c,cmd=session_setup,status=0'
after() { echo "dir=s2c,after-setup,nth=$1"; }

case $CASE in
# NEGOTIATE response: SIGNING_REQUIRED (0x2) cleared when the client requires signing. 3.1.1: the
# preauth hash no longer matches the server's, so the signed final SESSION_SETUP fails to verify;
# 3.0: VALIDATE_NEGOTIATE_INFO sees the server's real SecurityMode.
neg_signing_cleared)
  attack "3.1.1, signing-required bit cleared" "signature" "-o sign $CAT" "$NEG,clear=secmode:0x2"
  attack "3.0, signing-required bit cleared" "VALIDATE_NEGOTIATE|signature" "-o sign,vers=3.0 $CAT" \
    "$NEG,clear=secmode:0x2"
  ;;
# DialectRevision rewritten: lower than chosen but offered (keys then differ from the server's), and
# one that was never offered.
dialect_lower)
  attack "3.1.1 rewritten to 3.0" "signature" "$CAT" "$NEG,put=dialect:0x0300"
  attack "3.1.1 rewritten to 2.1" "signature" "$CAT" "$NEG,put=dialect:0x0210"
  attack "3.0.2 rewritten to 3.0 (VALIDATE_NEGOTIATE)" "VALIDATE_NEGOTIATE|signature" "-o vers=3 $CAT" \
    "$NEG,put=dialect:0x0300"
  ;;
dialect_not_offered)
  attack "3.0 asked, 3.1.1 answered" "not offered" "-o vers=3.0 $CAT" "$NEG,put=dialect:0x0311"
  attack "unknown dialect 0x0222" "not offered" "$CAT" "$NEG,put=dialect:0x0222"
  ;;
# min_vers=: an older dialect is neither offered nor accepted.
min_vers)
  attack "min_vers=3.1.1, 3.0 answered" "not offered" "-o min_vers=3.1.1 $CAT" "$NEG,put=dialect:0x0300"
  attack "min_vers=3.0, 2.1 answered" "not offered" "-o min_vers=3.0 $CAT" "$NEG,put=dialect:0x0210"
  ;;
min_vers_server) # the server speaks at most 2.1 (CMakeLists.txt): no common dialect, said so
  start_relay
  check_fails "min_vers=3.0 against a 2.1 server" "none of the dialects" $SMB3 -o min_vers=3.0 cat "$(url)/hi.txt"
  check "without min_vers the same server works" $SMB3 cat "$(url)/hi.txt"
  stop_relay
  ;;
# 3.1.1 negotiate contexts (MS-SMB2 2.2.4.1): type 1 preauth (hash id at +12), 2 encryption (cipher
# at +10), 8 signing (algorithm at +10); offsets from the context's header.
no_preauth_ctx)
  attack "preauth context renamed away" "preauth integrity context" "$CAT" "$NEG,put=ctx1+0/2:0x7fff"
  ;;
preauth_hash_not_offered)
  attack "preauth hash 0x0002" "hash algorithm that was not offered" "$CAT" "$NEG,put=ctx1+12/2:0x0002"
  ;;
cipher_not_offered)
  attack "cipher 0x0009" "cipher that was not offered" "$CAT" "$NEG,put=ctx2+10/2:0x0009"
  ;;
sign_alg_not_offered)
  attack "signing algorithm HMAC-SHA256 (0)" "signing algorithm that was not offered" "$CAT" \
    "$NEG,put=ctx8+10/2:0x0000"
  ;;
# After session setup on a signing session (server signing = mandatory): one bit of a signed
# response flipped, and a signature removed.
flip_signed)
  attack "bit flipped in the TREE_CONNECT response" "signature" "$CAT" "$(after 1),flip=body+4/4:0"
  attack "bit flipped in the READ response" "signature" "$CAT" "dir=s2c,cmd=read,flip=msg+90:0"
  ;;
# The compound probe (lib/client/connect.c) spoiled: one bit of the first ECHO answer of the two-ECHO
# compound flipped. The client cannot tell this from a server that signs compounds wrongly, so it goes
# on one request at a time; that is all the attacker gets: the command works, its output is the
# server's, and a bit flipped in a later answer still ends the connection.
probe_spoiled)
  SPOIL="dir=s2c,cmd=echo,nth=1,flip=body+2/2:0"
  start_relay "$SPOIL"
  if $SMB3 --stats $(echo "${CAT//@URL@/$(url)}") >"$WORK/out" 2>"$WORK/err"; then
    expect_out=$(cat "$SMB3_TEST_SHARE_DIR/hi.txt")
    [ "$(cat "$WORK/out")" = "$expect_out" ] && ok "probe spoiled: the command works, the server's bytes" ||
      bad "probe spoiled: output '$(cat "$WORK/out")'"
    grep -q '"compound_fallback":1' "$WORK/err" && ok "probe spoiled: one request at a time" ||
      bad "probe spoiled: no fallback: $(tail -1 "$WORK/err")"
  else
    bad "probe spoiled: the command failed: $(cat "$WORK/err")"
  fi
  grep -q "rule 1 action [0-9]* fired" "$WORK/relay.log" && ok "probe spoiled: rule fired" || bad "probe spoiled: rule never fired"
  stop_relay
  attack "probe spoiled, then a bit flipped in the CREATE response" "signature" "$CAT" "$SPOIL" \
    "dir=s2c,cmd=create,nth=1,flip=body+4/4:0"
  ;;
unsigned_after_setup)
  attack "signature removed from the CREATE response" "signature" "$CAT" "dir=s2c,cmd=create,unsign"
  ;;
# The final SESSION_SETUP response of 3.1.1 unsigned (server signing not required): its SessionFlags
# and the NEGOTIATE response behind the preauth hash would be unprotected.
setup_unsigned_311)
  attack "final SESSION_SETUP unsigned" "signature|signed" "$CAT" "$SETUP,unsign"
  attack "TREE_CONNECT response unsigned (3.1.1 signs it)" "signature|signed" "$CAT" \
    "dir=s2c,cmd=tree_connect,unsign"
  ;;
# smb encrypt = required server-wide: a plaintext message where a transform frame belongs, and the
# session's ENCRYPT_DATA flag stripped together with the signature.
plaintext_encrypted_session)
  attack "plaintext response on an encrypted session" "encrypt" "$CAT" "dir=s2c,cmd=transform,nth=1,replay=3"
  attack "ENCRYPT_DATA cleared, signature removed" "signature|signed" "$CAT" "$SETUP,clear=sessflags:0x4,unsign"
  ;;
# smb encrypt = required on the test share only: the TREE_CONNECT response says so (ShareFlags 0x8000).
plaintext_encrypted_share)
  attack "plaintext response on an encrypted share" "encrypt" "$CAT" "dir=s2c,cmd=transform,nth=1,replay=4"
  attack "share's ENCRYPT_DATA cleared, signature removed" "signature|signed" "$CAT" \
    "dir=s2c,cmd=tree_connect,clear=shareflags:0x8000,unsign"
  ;;
# Guest or anonymous sessions have no keys: refused when the client requires signing or encryption,
# whether the server really logs on a guest or someone on the path says it did.
guest_required)
  start_relay
  check_fails "anonymous with -o sign" "guest" $SMB3 -o sign ls "$(url "$SMB3_TEST_GUEST_SHARE" anon)/"
  check_fails "anonymous with -o seal" "encryption" $SMB3 -o seal ls "$(url "$SMB3_TEST_GUEST_SHARE" anon)/"
  check "anonymous without them works" $SMB3 ls "$(url "$SMB3_TEST_GUEST_SHARE" anon)/"
  stop_relay
  attack "IS_GUEST forged with -o sign" "guest|signature|signed" "-o sign $CAT" "$SETUP,or=sessflags:0x1,unsign"
  attack "IS_GUEST forged with -o seal" "guest|encrypt|signature|signed" "-o seal $CAT" \
    "$SETUP,or=sessflags:0x1,unsign"
  ;;
# 3.0 (vers=3.0): VALIDATE_NEGOTIATE_INFO's answer changed (the signature breaks), unsigned, or
# replaced by an unsigned "not supported".
validate_negotiate)
  attack "answer changed" "signature|VALIDATE" "-o vers=3.0 $CAT" "dir=s2c,cmd=ioctl,nth=1,flip=msg+130:0"
  attack "answer unsigned" "signature|signed|VALIDATE" "-o vers=3.0 $CAT" "dir=s2c,cmd=ioctl,nth=1,unsign"
  attack "unsigned STATUS_NOT_SUPPORTED" "signature|signed|VALIDATE" "-o vers=3.0 $CAT" \
    "dir=s2c,cmd=ioctl,nth=1,put=status:0xc00000bb,unsign"
  ;;
# An earlier signed response replayed in place of a later one.
replay)
  attack "old CREATE response for the READ" "protocol|replay|unexpected" "$CAT" "dir=s2c,cmd=read,replay=5"
  attack "old TREE_CONNECT response again" "protocol|replay|unexpected" "$CAT" "dir=s2c,cmd=create,replay=4"
  ;;
# Responses cut short or never delivered: a clean error, never a hang (timeout=2 for the dropped one).
drop_truncate)
  attack "CREATE response truncated to 80 bytes" "malformed|unexpected" "$CAT" "dir=s2c,cmd=create,truncate=80"
  attack "READ response dropped" "timed out|timeout" "-o timeout=2 $CAT" "dir=s2c,cmd=read,drop"
  attack "sealed READ response truncated" "malformed|unexpected|signature|encrypt" "-o seal $CAT" \
    "dir=s2c,cmd=transform,nth=3,truncate=100"
  ;;
# A bit flipped in the ciphertext of a sealed READ response (-o seal): the read fails and what was
# written is a prefix of the file (authenticated data only; the flipped bit would show otherwise).
sealed_read_flip)
  head -c $((3 << 20)) /dev/urandom >"$SMB3_TEST_SHARE_DIR/big.bin"
  chown "$SMB3_TEST_USER:" "$SMB3_TEST_SHARE_DIR/big.bin"
  start_relay
  check "sealed cat works" $SMB3 -o seal,rsize=1M cat "$(url)/big.bin"
  start_relay "dir=s2c,cmd=transform,minlen=1000000,nth=2,flip=msg+500000:3"
  check_fails "sealed READ with a flipped bit" "signature|encrypt|integrity|authent" \
    $SMB3 -o seal,rsize=1M cat "$(url)/big.bin"
  if grep -q "rule 1 action 1 fired" "$WORK/relay.log"; then ok "rule fired"; else bad "rule never fired"; fi
  n=$(stat -c %s "$WORK/out")
  if [ "$n" -lt $((3 << 20)) ] && cmp -s -n "$n" "$WORK/out" "$SMB3_TEST_SHARE_DIR/big.bin"; then
    ok "output is $n bytes, a prefix of the file"
  else
    bad "output ($n bytes) is not a short prefix of the file"
  fi
  start_relay "dir=s2c,cmd=transform,minlen=1000000,nth=2,flip=msg+500000:3"
  check_fails "sealed get with a flipped bit" "signature|encrypt|integrity|authent" \
    $SMB3 -o seal,rsize=1M get "$(url)/big.bin" "$WORK/got.bin"
  if [ ! -e "$WORK/got.bin" ] || cmp -s -n "$(stat -c %s "$WORK/got.bin")" "$WORK/got.bin" "$SMB3_TEST_SHARE_DIR/big.bin"; then
    ok "get left no unauthenticated data ($( [ -e "$WORK/got.bin" ] && stat -c %s "$WORK/got.bin" || echo no) file)"
  else
    bad "get's file holds data that differs from the source"
  fi
  stop_relay
  ;;
*)
  bad "unknown case $CASE"
  ;;
esac
finish
