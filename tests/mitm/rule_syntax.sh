#!/usr/bin/env bash
# rule_syntax.sh NETSIM: every bad --rule is refused with exit status 2 and one line naming it; good
# ones start the relay (it prints its "listening" line and exits after --max-seconds).
NETSIM=${1:?usage: rule_syntax.sh NETSIM}
failed=0
bad_rule() {
  local rule=$1 want=$2 err rc=0
  err=$("$NETSIM" --listen 127.0.0.1:0 --to 127.0.0.1:9 --rule "$rule" 2>&1 >/dev/null) || rc=$?
  if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && [[ $err == *"$want"* ]]; then
    echo "ok   '$rule': $err"
  else
    echo "FAIL '$rule': exit $rc, '$err' (wanted exit 2 and '$want')"
    failed=1
  fi
}
good_rule() {
  local out rc=0
  out=$("$NETSIM" --listen 127.0.0.1:0 --to 127.0.0.1:9 --max-seconds 0.1 --quiet --rule "$1" 2>&1) || rc=$?
  if [ "$rc" -eq 0 ] && [[ $out == listening* ]]; then echo "ok   '$1' accepted"; else
    echo "FAIL '$1': exit $rc, '$out'"
    failed=1
  fi
}
bad_rule 'cmd=read,drop' 'needs dir'
bad_rule 'dir=up,drop' 'bad dir'
bad_rule 'dir=s2c,cmd=read' 'no action'
bad_rule 'dir=s2c,frob' "unknown rule item 'frob'"
bad_rule 'dir=s2c,cmd=nosuch,drop' "bad cmd 'nosuch'"
bad_rule 'dir=s2c,put=body+4/3:1' 'bad action'
bad_rule 'dir=s2c,flip=flags:32' 'bad action'
bad_rule 'dir=s2c,clear=nowhere:1' 'bad action'
bad_rule 'dir=s2c,nth=0,drop' 'bad nth'
bad_rule 'dir=s2c,replay=0' 'bad action'
bad_rule 'dir=s2c,drop=1' 'bad action'
good_rule 'dir=s2c,cmd=negotiate,clear=secmode:0x2,put=ctx2+10/2:9,flip=msg+3:7,unsign'
good_rule 'dir=c2s,cmd=transform,after-setup,nth=2,minlen=100,truncate=10'
good_rule 'dir=s2c,status=0xc0000016,replay,replay=1,drop'
out=$("$NETSIM" --listen 127.0.0.1:0 --to 127.0.0.1:9 --rule dir=s2c,drop --delay-ms 1 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 2 ] && [[ $out == *"does not combine"* ]]; then echo "ok   --rule with --delay-ms refused"; else
  echo "FAIL --rule with --delay-ms: exit $rc, '$out'"
  failed=1
fi
exit $failed
