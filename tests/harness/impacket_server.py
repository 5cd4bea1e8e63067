#!/usr/bin/python3
# impacket_server.py - the SMB2 server of impacket (Debian's python3-impacket), for with-impacket.
#
#   impacket_server.py PORTFILE SHARE PATH USER
#   (password from $IMPACKET_PASS, never argv; the harness' pid from $IMPACKET_HARNESS_PID)
#
# Binds 127.0.0.1 on a port the kernel picks, writes it to PORTFILE (atomically, once listening:
# a connect from then on is queued by the kernel, so no wait is needed), then serves until killed.
# Dies with its parent (PR_SET_PDEATHSIG), so a killed harness leaves no server behind; it then
# removes the harness' temp dir (PORTFILE's directory) too.
import ctypes
import os
import shutil
import signal
import sys

PR_SET_PDEATHSIG = 1


def main():
    portfile, share, path, user = sys.argv[1:5]
    password = os.environ.pop("IMPACKET_PASS")
    parent = int(os.environ.pop("IMPACKET_HARNESS_PID"))  # not getppid(): it may have died already

    def term(*_):
        if os.getppid() != parent:  # the harness died (SIGKILL): nobody else removes its temp dir
            shutil.rmtree(os.path.dirname(os.path.abspath(portfile)), ignore_errors=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, term)  # before PR_SET_PDEATHSIG, whose signal it handles
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        sys.exit("impacket_server: prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before prctl
        term()
    # impacket only now (slow to import): a harness killed meanwhile is noticed above
    from impacket import smbserver
    from impacket.ntlm import compute_lmhash, compute_nthash

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
