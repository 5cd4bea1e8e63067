#!/usr/bin/env bash
# Bad input gets one clear error line and a non-zero exit, never a hang, never a partial file.
# Needs NETSIM (path of tools/netsim) for the mid-transfer drop.
source "$(dirname "$0")/lib.sh"
U=$SMB3_TEST_URL
H=$SMB3_TEST_HOST P=$SMB3_TEST_PORT S=$SMB3_TEST_SHARE
echo hi >"$SMB3_TEST_SHARE_DIR/hi.txt"

check_fails "wrong password" "logon failure" $SMB3 ls "smb://$SMB3_TEST_USER:wrong@$H:$P/$S/"
check_fails "unknown user" "logon failure|guest" $SMB3 ls "smb://nosuchuser:x@$H:$P/$S/"
check_fails "unknown share" "share|network name" $SMB3 ls "smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@$H:$P/nosuchshare/"
check_fails "unknown file" "no such file" $SMB3 cat "$U/nosuchfile"
check_fails "unknown dir" "no such file" $SMB3 ls "$U/nosuchdir/"
check_fails "get unknown file" "no such file" $SMB3 get "$U/nosuchfile" "$WORK/nf"
[ -e "$WORK/nf" ] && bad "get of a missing file created a local file" || ok "no local file for a failed get"
# a port nobody listens on
freeport=$(( (P + 7919) % 40000 + 20000 ))
check_fails "connection refused" "cannot connect|refused" $SMB3 ls "smb://u:p@127.0.0.1:$freeport/share/"
check_fails "bad URL scheme" "bad URL" $SMB3 ls "http://host/share"
check_fails "URL without share" "share" $SMB3 cat "smb://host" # (ls lists a server's shares: cli_shares.sh)
check_fails "bad port" "bad URL" $SMB3 ls "smb://u:p@host:99999/share"
check_fails "unknown option" "unknown option" $SMB3 -o nosuchoption ls "$U/"
check_fails "bad dialect" "bad value" $SMB3 -o vers=9.9 ls "$U/"
check_fails "put missing local file" "cannot open" $SMB3 put "$WORK/missing" "$U/x"
echo data >"$WORK/small"
check_fails "put into a missing remote directory" "cannot create 'no-such-dir/x': no such file" $SMB3 put "$WORK/small" "$U/no-such-dir/x"
check_fails "seal on 2.1" "encryption" $SMB3 -o vers=2.1,seal ls "$U/"
check_fails "wrong password (PASSWD env)" "logon failure" env PASSWD=wrong $SMB3 ls "smb://$SMB3_TEST_USER@$H:$P/$S/"
check "password from PASSWD" env PASSWD="$SMB3_TEST_PASS" $SMB3 ls "smb://$SMB3_TEST_USER@$H:$P/$S/"
printf 'username=%s\npassword=%s\ndomain=%s\n' "$SMB3_TEST_USER" "$SMB3_TEST_PASS" "$SMB3_TEST_DOMAIN" >"$WORK/cred"
check "password from -A file" $SMB3 -A "$WORK/cred" ls "smb://$H:$P/$S/"
check_fails "missing -A file" "credentials file" $SMB3 -A "$WORK/nocred" ls "smb://$H:$P/$S/"

# A server that accepts and then never answers: the request times out, no hang.
python3 - "$WORK/silent.port" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
conns = []
end = time.time() + 30
s.settimeout(1)
while time.time() < end:
    try: conns.append(s.accept()[0])
    except socket.timeout: pass
PY
silent=$!
for _ in $(seq 50); do [ -s "$WORK/silent.port" ] && break; sleep 0.1; done
check_fails "silent server times out" "timed out" $SMB3 -o timeout=2 ls "smb://u:p@127.0.0.1:$(cat "$WORK/silent.port")/s/"
kill $silent 2>/dev/null; wait $silent 2>/dev/null || true

# Something that is not an SMB server (here an HTTP server's error page) answers on the port.
python3 - "$WORK/http.port" <<'PY' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(20)
c = s.accept()[0]; c.recv(4096)
c.sendall(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"); c.close()
PY
http=$!
for _ in $(seq 50); do [ -s "$WORK/http.port" ] && break; sleep 0.1; done
check_fails "not an SMB server" "not an SMB2/SMB3 server" $SMB3 -o timeout=5 ls "smb://u:p@127.0.0.1:$(cat "$WORK/http.port")/s/"
kill $http 2>/dev/null; wait $http 2>/dev/null || true

# The server drops the connection in the middle of a transfer: a clear error, no partial file.
if [ -n "${NETSIM:-}" ]; then
  head -c 64M /dev/urandom >"$SMB3_TEST_SHARE_DIR/big"
  chmod 644 "$SMB3_TEST_SHARE_DIR/big"
  "$NETSIM" --listen 127.0.0.1:0 --to "127.0.0.1:$P" --rate 200mbit --quiet >"$WORK/ns.out" &
  ns=$!
  for _ in $(seq 50); do grep -q listening "$WORK/ns.out" 2>/dev/null && break; sleep 0.1; done
  np=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$WORK/ns.out" | head -1)
  # kill_clients DIR NAME: once the transfer is under way (the smbd child serving the client holds
  # an established connection on the server port, and the temporary file .NAME.smb3-* in DIR has
  # data), kill that smbd; exits 0 only if the temporary file was still short of the 64 MiB just
  # before the kill (with the transfer failing, the kill fell mid-transfer). Its size goes to
  # $WORK/kill.at.
  kill_clients() {
    local dir=$1 name=$2 pids="" tmp="" size=0 _
    for _ in $(seq 1000); do # at most ~10 s for the transfer to start
      pids=$(ss -Htnp state established "( sport = :$P )" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u)
      tmp=$(ls -a "$dir" | grep -m1 "^\.$name\.smb3-")
      size=0; [ -n "$tmp" ] && size=$(stat -c %s "$dir/$tmp" 2>/dev/null || echo 0)
      [ -n "$pids" ] && [ "$size" -gt 0 ] && break
      sleep 0.01
    done
    [ -n "$pids" ] && [ "$size" -gt 0 ] || { echo "no transfer under way (smbd: '$pids', temporary file: '$tmp')" >"$WORK/kill.at"; return 1; }
    size=$(stat -c %s "$dir/$tmp" 2>/dev/null || echo 0) # just before the kill: bytes still to come
    kill -9 $pids
    echo "$size of $((64 << 20)) bytes in the temporary file" >"$WORK/kill.at"
    [ "$size" -lt $((64 << 20)) ]
  }
  mid_transfer() { # NAME: kill_clients' verdict
    if wait $kc; then ok "$1: the connection was killed mid-transfer ($(cat "$WORK/kill.at"))"
    else bad "$1: the kill did not fall mid-transfer: $(cat "$WORK/kill.at")"; fi
  }
  kill_clients "$WORK" big & kc=$!
  check_fails "connection dropped during get" "connection|lost|closed" $SMB3 -q get "smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@127.0.0.1:$np/$S/big" "$WORK/big"
  mid_transfer "get"
  if [ -e "$WORK/big" ] || ls -a "$WORK" | grep -q smb3-; then bad "partial local file left after a dropped get"; else ok "no partial local file after a dropped get"; fi
  head -c 64M /dev/urandom >"$WORK/up"
  kill_clients "$SMB3_TEST_SHARE_DIR" up & kc=$!
  check_fails "connection dropped during put" "connection|lost|closed" $SMB3 -q put "$WORK/up" "smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@127.0.0.1:$np/$S/up"
  mid_transfer "put"
  if [ -e "$SMB3_TEST_SHARE_DIR/up" ]; then bad "a file appeared under the final name after a dropped put"; else ok "no file under the final name after a dropped put"; fi
  kill $ns 2>/dev/null; wait $ns 2>/dev/null
else
  bad "NETSIM not set: cannot test a dropped connection"
fi
finish
