#!/usr/bin/python3
# impacket_server.py - the SMB2 server of impacket (Debian's python3-impacket), for with-impacket.
#
#   impacket_server.py PORTFILE SHARE PATH USER      (password from $IMPACKET_PASS, never argv)
#
# Binds 127.0.0.1 on a port the kernel picks, writes it to PORTFILE (atomically, once listening:
# a connect from then on is queued by the kernel, so no wait is needed), then serves until killed.
# Dies with its parent (PR_SET_PDEATHSIG), so a killed harness leaves no server behind.
import ctypes
import os
import signal
import sys

from impacket import smbserver
from impacket.ntlm import compute_lmhash, compute_nthash

PR_SET_PDEATHSIG = 1


def main():
    portfile, share, path, user = sys.argv[1:5]
    password = os.environ.pop("IMPACKET_PASS")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        sys.exit("impacket_server: prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() == 1:  # the parent died before prctl
        sys.exit("impacket_server: parent gone")
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    server = smbserver.SimpleSMBServer(listenAddress="127.0.0.1", listenPort=0)
    server.addShare(share, path, "impacket test share")
    server.setSMB2Support(True)
    server.addCredential(user, 0, compute_lmhash(password), compute_nthash(password))
    server.setSMBChallenge(os.urandom(8).hex())  # impacket's default is a fixed AA..AA
    server.setLogFile("")  # log to stderr (the harness' log file)
    port = server._SimpleSMBServer__server.server_address[1]
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % port)
    os.rename(portfile + ".tmp", portfile)
    server.start()


if __name__ == "__main__":
    main()
