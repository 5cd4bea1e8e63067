#!/usr/bin/env bash
# Names another client removed while this mount still knows them (entries cached for actimeo,
# handles the application closed still waiting in the close queue), and names made again right
# after: what SQLite's journal, created and removed by two clients in turn, needs.
# - The other client's create of the name it just removed succeeds (the name is delete-pending
#   until the queued handles are closed: Samba 4.17 answers STATUS_DELETE_PENDING, and the CREATE
#   is sent again; Samba 4.22 breaks the handle lease, and the queue is drained before the ack).
# - open(O_CREAT) here of a removed name creates it; a plain open fails with ENOENT; a file put
#   under the name meanwhile is the one opened.
# - A file id the server gave again to a new file (ext4 and tmpfs reuse a deleted file's inode
#   number at once) does not make the old name show the new file.
# - A name another program really holds open stays delete-pending: the create fails with ENOENT
#   after a bounded wait (no hang), and works once that program closed it.
# - A file renamed away by another client while it is open here: its old name opens what is there
#   now (ENOENT, or the new file), though the server still ties the lease key used for it to it.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
mount_into A "actimeo=60"
mount_into B ""
printf one >"$B/f"; printf one >"$B/g"; printf old >"$B/h"
expect "A sees f" "$(cat "$A/f")" "one"
expect "A sees g" "$(cat "$A/g")" "one"
expect "A sees h" "$(cat "$A/h")" "old"
check "another client removes f, g and h" rm "$B/f" "$B/g" "$B/h"
if printf new 2>"$WORK/err" >"$B/h"; then ok "that client creates h again at once"
else bad "that client creates h again: $(cat "$WORK/err")"; fi
if printf two 2>"$WORK/err" >"$A/f"; then ok "open(O_CREAT) of the removed name creates it"
else bad "open(O_CREAT) of the removed name: $(cat "$WORK/err")"; fi
expect "the new file on the server" "$(cat "$D/f")" "two"
err=$(cat "$A/g" 2>&1 >/dev/null)
case $err in *"No such file"*) ok "a plain open of the removed name: ENOENT" ;; *) bad "a plain open of the removed name: '$err' (content '$(cat "$A/g" 2>/dev/null)')" ;; esac
expect "a file another client put under the name is the one opened" "$(cat "$A/h" 2>&1)" "new"
expect "h on the server" "$(cat "$D/h")" "new"

# A file whose lease another client broke (this mount then asks the server for its attributes: a
# stat, and the permission check of an open, send a GETATTR through the entry the kernel keeps for
# actimeo), and which that client then removes: a stat says ENOENT (not ESTALE), and open(O_CREAT)
# makes it anew (SQLite's journal: access(), then open(O_CREAT)). Each of stat and open comes first
# once.
printf w >"$B/w"; printf w >"$B/w2"
exec 4<"$A/w" 5<"$A/w2"
breaks=$(stats "$A" lease_breaks)
printf more >>"$B/w"; printf more >>"$B/w2"
n=0; while [ "$(stats "$A" lease_breaks)" -lt $((breaks + 2)) ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
expect "the other client's writes broke both leases" "$(( $(stats "$A" lease_breaks) - breaks ))" 2
exec 4<&- 5<&-
rm "$B/w" "$B/w2"
err=$(stat -c %s "$A/w" 2>&1)
case $err in *"No such file"*) ok "stat of a file another client removed: ENOENT" ;; *) bad "stat of a file another client removed: '$err'" ;; esac
if printf again 2>"$WORK/err" >"$A/w"; then ok "... then open(O_CREAT) of it creates it"
else bad "... then open(O_CREAT) of it: $(cat "$WORK/err")"; fi
expect "... on the server" "$(cat "$D/w" 2>&1)" "again"
if printf again 2>"$WORK/err" >"$A/w2"; then ok "open(O_CREAT) first of a file another client removed creates it"
else bad "open(O_CREAT) first of a file another client removed: $(cat "$WORK/err")"; fi
expect "... on the server" "$(cat "$D/w2" 2>&1)" "again"

# the name of a file a program here holds open
printf held >"$B/k"
exec 3<"$A/k"
check "another client removes k while it is open here" rm "$B/k"
if printf x 2>"$WORK/err" >"$B/k"; then bad "a create of the name while the file is open: succeeded"
else
  case $(cat "$WORK/err") in *"No such file"*) ok "a create of the name while the file is open: ENOENT" ;;
  *) bad "a create of the name while the file is open: $(cat "$WORK/err")" ;; esac
fi
expect "the open file still reads" "$(cat <&3)" "held"
exec 3<&-
# (the close(2) returns before the handle is closed on the server: the create waits for it)
if printf x 2>"$WORK/err" >"$B/k"; then ok "once it is closed, the name can be made again"
else bad "once it is closed, the name can be made again: $(cat "$WORK/err")"; fi
expect "k on the server" "$(cat "$D/k")" "x"
# A file another client renames away while it is open here: the server still ties this mount's lease
# key for it to the file, under its new name (Samba refuses that key for the old name with
# INVALID_PARAMETER); an open of the old name says ENOENT, or opens the file put there since.
printf r1 >"$B/r1"; printf r2 >"$B/r2"
expect "A sees r1" "$(cat "$A/r1")" "r1"
expect "A sees r2" "$(cat "$A/r2")" "r2"
exec 3<"$A/r1" 4<"$A/r2"
check "another client renames r1 and r2 away while they are open here" mv "$B/r1" "$B/r1.moved"
check "... and r2" mv "$B/r2" "$B/r2.moved"
printf new >"$B/r2"
err=$(cat "$A/r1" 2>&1 >/dev/null)
case $err in *"No such file"*) ok "an open here of the old name: ENOENT" ;; *) bad "an open here of the old name: '$err'" ;; esac
expect "an open here of the old name another client made again: the new file" "$(cat "$A/r2" 2>&1)" "new"
expect "the open one still reads" "$(cat <&3)" "r1"
exec 3<&- 4<&-
finish
