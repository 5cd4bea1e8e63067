#!/usr/bin/env python3
"""hostile_server.py - a scripted SMB2 server (standard library only) that completes a valid
handshake and then answers one chosen request with something Samba never sends.

  hostile_server.py CASE PORTFILE [CORPUSDIR]

Listens on 127.0.0.1 at a free port, writes the port to PORTFILE, serves connections until the
client goes away or 60 s pass. Dialect 2.1 (no preauth contexts, no VALIDATE_NEGOTIATE), signing
enabled but not required, and an anonymous NTLMSSP logon (the client's -o guest) answered with
SMB2_SESSION_FLAG_IS_NULL, so that nothing is signed and every hostile byte reaches a decoder.
With CORPUSDIR, the hostile SMB2 message of the case (the bytes the client's decoder sees) is
also written to CORPUSDIR/<fuzz target>/hostile-<case> (how tests/fuzz/corpus/ got them).

Layouts: MS-SMB2 2.2 (header 2.2.1.2, NEGOTIATE 2.2.4, SESSION_SETUP 2.2.6, TREE_CONNECT 2.2.10,
CREATE 2.2.14, CLOSE 2.2.16, READ 2.2.20, QUERY_DIRECTORY 2.2.34, QUERY_INFO 2.2.38, IOCTL 2.2.32,
lease break 2.2.23.2), MS-NLMP 2.2.1.2 (CHALLENGE), MS-FSCC 2.4 (information classes).
"""
import os
import socket
import struct
import sys
import time

NEGOTIATE, SESSION_SETUP, LOGOFF, TREE_CONNECT, TREE_DISCONNECT = 0, 1, 2, 3, 4
CREATE, CLOSE, FLUSH, READ, WRITE, LOCK, IOCTL, CANCEL, ECHO = 5, 6, 7, 8, 9, 10, 11, 12, 13
QUERY_DIRECTORY, CHANGE_NOTIFY, QUERY_INFO, SET_INFO, OPLOCK_BREAK = 14, 15, 16, 17, 18

OK = 0
PENDING = 0x00000103
MORE_PROCESSING = 0xC0000016
NO_MORE_FILES = 0x80000006
NOT_SUPPORTED = 0xC00000BB
NO_SUCH_FILE = 0xC000000F
LOGON_FAILURE = 0xC000006D

FLAG_RESPONSE, FLAG_ASYNC, FLAG_RELATED = 0x1, 0x2, 0x4
SESSION_ID = 0x0000100000000001
TREE_ID = 7
FID = b"\x11" * 8 + b"\x22" * 8

CASE = sys.argv[1][3:] if sys.argv[1].startswith("fs_") else sys.argv[1]
PORTFILE = sys.argv[2]
CORPUS = sys.argv[3] if len(sys.argv) > 3 else None


def hdr(cmd, mid, status=OK, credits=32, flags=FLAG_RESPONSE, next_cmd=0, tree=TREE_ID, async_id=None):
    if async_id is not None:
        flags |= FLAG_ASYNC
        mid_rest = struct.pack("<Q", async_id)
    else:
        mid_rest = struct.pack("<II", 0xFEFF, tree)
    return (b"\xfeSMB" + struct.pack("<HHIHHII", 64, 1, status, cmd, credits, flags, next_cmd) +
            struct.pack("<Q", mid) + mid_rest + struct.pack("<Q", SESSION_ID) + b"\0" * 16)


def error_body():
    return struct.pack("<HBBI", 9, 0, 0, 0) + b"\0"


def nbss(msg):
    return struct.pack(">I", len(msg)) + msg


def save_corpus(target, data):
    """The hostile message into CORPUSDIR/<target>/hostile-<case> (the decoder's input)."""
    if not CORPUS:
        return
    if target == "fuzz_core":  # its records: [flags:1][length:3, big-endian][frame] (fuzz_core.c)
        data = b"\0" + struct.pack(">I", len(data))[1:] + data
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "hostile-" + CASE), "wb") as f:
        f.write(data)


# ---- DER for the SPNEGO NegTokenResp carrying the NTLMSSP CHALLENGE (RFC 4178 4.2.2) ----
def der(tag, content):
    n = len(content)
    if n < 0x80:
        ln = bytes([n])
    elif n < 0x100:
        ln = bytes([0x81, n])
    else:
        ln = bytes([0x82, n >> 8, n & 0xFF])
    return bytes([tag]) + ln + content


NTLMSSP_OID = bytes([0x2B, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0A])


def spnego_resp(state, token=None):
    fields = der(0xA0, der(0x0A, bytes([state])))
    if token is not None:
        fields += der(0xA1, der(0x06, NTLMSSP_OID)) + der(0xA2, der(0x04, token))
    return der(0xA1, der(0x30, fields))


def ntlm_challenge(target_info):
    flags = 0x1 | 0x200 | 0x80000 | 0x800000 | 0x2000000 | 0x20000000 | 0x40000000 | 0x80000000 | 0x10
    head_len = 56
    ti_off = head_len
    return (b"NTLMSSP\0" + struct.pack("<I", 2) + struct.pack("<HHI", 0, 0, head_len) +
            struct.pack("<I", flags) + b"\x01\x02\x03\x04\x05\x06\x07\x08" + b"\0" * 8 +
            struct.pack("<HHI", len(target_info), len(target_info), ti_off) +
            b"\x06\x01\xb1\x1d\x00\x00\x00\x0f" + target_info)


# MsvAvNbDomainName "D", MsvAvEOL
TARGET_INFO = struct.pack("<HH", 2, 2) + "D".encode("utf-16-le") + struct.pack("<HH", 0, 0)


# ---- response bodies ----
def negotiate_body():
    now = int((time.time() + 11644473600) * 10000000)
    return (struct.pack("<HHHH", 65, 0x1, 0x0210, 0) + b"\x5a" * 16 +
            struct.pack("<IIII", 0x1 | 0x4, 1 << 20, 1 << 20, 1 << 20) +
            struct.pack("<QQ", now, 0) + struct.pack("<HHI", 128, 0, 0))


def session_setup_body(token, flags=0):
    return struct.pack("<HHHH", 9, flags, 72, len(token)) + token


def tree_connect_body():
    return struct.pack("<HBBIII", 16, 1, 0, 0, 0, 0x001F01FF)


def file_times():
    now = int((time.time() + 11644473600) * 10000000)
    return struct.pack("<QQQQ", now, now, now, now)


def create_body(attrs, size=0, ctx=b"", ctx_off=None, ctx_len=None):
    if ctx_off is None:
        ctx_off = 64 + 88 if ctx else 0
    if ctx_len is None:
        ctx_len = len(ctx)
    return (struct.pack("<HBBI", 89, 0, 0, 1) + file_times() + struct.pack("<QQII", size, size, attrs, 0) +
            FID + struct.pack("<II", ctx_off, ctx_len) + (ctx if ctx else b"\0"))


def close_body():
    return struct.pack("<HHI", 60, 0, 0) + b"\0" * 56


def dirent(name_utf16, attrs=0x20, size=5, next_off=0):
    """FileIdFullDirectoryInformation (MS-FSCC 2.4.18)."""
    return (struct.pack("<II", next_off, 0) + file_times() + struct.pack("<QQII", size, size, attrs, len(name_utf16)) +
            struct.pack("<IIQ", 0, 0, 42) + name_utf16)


def dir_buffer(names):
    out = b""
    ents = []
    for n in names:
        e = dirent(n)
        e += b"\0" * ((-len(e)) % 8)
        ents.append(e)
    for i, e in enumerate(ents):
        if i + 1 < len(ents):
            e = struct.pack("<I", len(e)) + e[4:]
        out += e
    return out


def query_dir_body(buf, off=None, length=None):
    return struct.pack("<HHI", 9, 72 if off is None else off, len(buf) if length is None else length) + (buf or b"\0")


def all_info(size=5, attrs=0x20, file_id=42):
    """FileAllInformation (MS-FSCC 2.4.2) with an empty name."""
    basic = file_times() + struct.pack("<II", attrs, 0)
    std = struct.pack("<QQIBBH", size, size, 1, 0, 1 if attrs & 0x10 else 0, 0)
    return basic + std + struct.pack("<Q", file_id) + struct.pack("<I", 0) + struct.pack("<I", 0x1F01FF) + \
        struct.pack("<Q", 0) + struct.pack("<I", 0) + struct.pack("<I", 0) + struct.pack("<I", 0)


def query_info_body(buf, off=72, length=None):
    return struct.pack("<HHI", 9, off, len(buf) if length is None else length) + (buf or b"\0")


def read_body(data, off=80, length=None):
    return struct.pack("<HBBIII", 17, off, 0, len(data) if length is None else length, 0, 0) + (data or b"\0")


def ioctl_body(ctl, out, out_off=112, out_len=None):
    return (struct.pack("<HHI", 49, 0, ctl) + FID + struct.pack("<IIII", 112, 0, out_off,
                                                                 len(out) if out_len is None else out_len) +
            struct.pack("<II", 0, 0) + (out or b"\0"))


def lease_break(key):
    return (struct.pack("<HHII", 44, 1, 0x1, 0x7) + key + struct.pack("<IIIII", 0x7, 0x1, 0, 0, 0))


# ---- per-connection state machine ----
class Conn:
    def __init__(self, sock):
        self.s = sock
        self.setup_round = 0
        self.files = {}
        self.qdir_done = False
        self.dup = None
        self.last_attrs = 0x10
        self.last_id = 5

    def send(self, msg):
        self.s.sendall(nbss(msg))

    def recv_frame(self):
        head = self.recv_exact(4)
        if head is None:
            return None
        n = struct.unpack(">I", head)[0] & 0xFFFFFF
        return self.recv_exact(n)

    def recv_exact(self, n):
        b = b""
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                return None
            b += c
        return b

    def serve(self):
        while True:
            f = self.recv_frame()
            if f is None:
                return
            if f[:4] == b"\xffSMB":  # an SMB1 negotiate: answer in SMB2 (MS-SMB2 3.3.5.3.1)
                self.reply_negotiate(0, b"")
                continue
            off = 0
            while True:
                nxt = struct.unpack_from("<I", f, off + 20)[0]
                msg = f[off:off + nxt] if nxt else f[off:]
                self.handle(msg)
                if not nxt:
                    break
                off += nxt

    def reply(self, cmd, mid, body, status=OK, **kw):
        self.send(hdr(cmd, mid, status, **kw) + body)

    def reply_negotiate(self, mid, _req):
        body = negotiate_body()
        credits = 32
        if CASE == "negotiate_offset_oob":  # a security buffer far past the frame
            body = body[:56] + struct.pack("<HHI", 0xFF00, 0x1000, 0)
            save_corpus("fuzz_negotiate_rsp", hdr(NEGOTIATE, mid) + body)
        if CASE == "zero_credits":
            credits = 0
        if CASE == "nbss_4g":  # a frame length of 2^32 - 1 bytes: the client must not believe it
            self.s.sendall(b"\xff\xff\xff\xff" + hdr(NEGOTIATE, mid) + body)
            save_corpus("fuzz_core", hdr(NEGOTIATE, mid) + body + b"\xff\xff\xff\xff")
            return
        self.reply(NEGOTIATE, mid, body, credits=credits)

    def handle(self, m):
        cmd, = struct.unpack_from("<H", m, 12)
        mid, = struct.unpack_from("<Q", m, 24)
        credits = 0 if CASE == "zero_credits" else 32
        if os.environ.get("HOSTILE_TRACE"):
            sys.stderr.write("req cmd %d mid %d len %d %s\n" % (cmd, mid, len(m), m[64:64 + 8].hex()))
        if cmd == NEGOTIATE:
            return self.reply_negotiate(mid, m)
        if cmd == SESSION_SETUP:
            self.setup_round += 1
            if self.setup_round == 1:
                ti = b"" if CASE == "ntlm_empty_targetinfo" else TARGET_INFO
                tok = spnego_resp(1, ntlm_challenge(ti))
                if CASE == "ntlm_empty_targetinfo":
                    save_corpus("fuzz_ntlmssp_challenge", ntlm_challenge(ti))
                return self.reply(SESSION_SETUP, mid, session_setup_body(tok), MORE_PROCESSING, credits=credits)
            if CASE == "ntlm_empty_targetinfo":  # we cannot check the response: refuse the logon
                return self.reply(SESSION_SETUP, mid, error_body(), LOGON_FAILURE)
            return self.reply(SESSION_SETUP, mid, session_setup_body(b"", flags=0x2), credits=credits)
        if cmd == TREE_CONNECT:
            body = tree_connect_body()
            if CASE == "structsize":  # StructureSize 17 instead of 16
                body = struct.pack("<H", 17) + body[2:]
                save_corpus("fuzz_tree_connect_rsp", hdr(TREE_CONNECT, mid) + body)
            if CASE == "unsolicited_mid":  # an answer to a request never sent, before the real one
                self.reply(TREE_CONNECT, mid + 1000, body)
                save_corpus("fuzz_core", hdr(TREE_CONNECT, mid + 1000) + body)
                return
            self.reply(TREE_CONNECT, mid, body, credits=credits)
            if CASE == "duplicate_mid":  # the same answer twice
                self.reply(TREE_CONNECT, mid, body, credits=credits)
            return
        if cmd == CREATE:
            return self.handle_create(m, mid, credits)
        if cmd == CLOSE:
            return self.reply(CLOSE, mid, close_body(), credits=credits)
        if cmd == QUERY_DIRECTORY:
            return self.handle_query_dir(mid)
        if cmd == QUERY_INFO:
            return self.handle_query_info(m, mid)
        if cmd == READ:
            return self.handle_read(m, mid)
        if cmd == IOCTL:
            return self.handle_ioctl(m, mid)
        if cmd in (ECHO, LOGOFF, TREE_DISCONNECT, FLUSH):
            return self.reply(cmd, mid, struct.pack("<HH", 4, 0))
        return self.reply(cmd, mid, error_body(), NOT_SUPPORTED)

    def create_name(self, m):
        off, ln = struct.unpack_from("<HH", m, 64 + 44)
        return m[off:off + ln].decode("utf-16-le", "replace")

    def handle_create(self, m, mid, credits):
        name = self.create_name(m)
        is_dir = name == "" or name.endswith("dir")
        attrs = 0x10 if is_dir else 0x20
        self.last_attrs = attrs  # what a following (compounded) QUERY_INFO describes
        self.last_id = 5 if name == "" else 42  # the root and 'file' (the entry's FileId in listings)
        if CASE == "pending_forever":  # an interim response, then nothing, ever
            self.reply(CREATE, mid, error_body(), PENDING, async_id=77)
            return
        if name.endswith("missing"):
            return self.reply(CREATE, mid, error_body(), NO_SUCH_FILE)
        ctx_len = struct.unpack_from("<I", m, 64 + 52)[0]
        if CASE == "create_context_truncated" and ctx_len:
            # one context whose DataLength runs past the end of the buffer
            ctx = struct.pack("<IHHHHI", 0, 16, 4, 24, 0, 0x400) + b"RqLs" + b"\0" * 4 + b"\0" * 8
            body = create_body(attrs, 5, ctx)
            save_corpus("fuzz_create_rsp", hdr(CREATE, mid) + body)
            return self.reply(CREATE, mid, body, credits=credits)
        if CASE == "create_context_oob" and ctx_len:
            body = create_body(attrs, 5, b"\0" * 8, ctx_off=0x1000, ctx_len=0x100)
            save_corpus("fuzz_create_rsp", hdr(CREATE, mid) + body)
            return self.reply(CREATE, mid, body, credits=credits)
        self.reply(CREATE, mid, create_body(attrs, 0 if is_dir else 5), credits=credits)
        if CASE == "lease_break_unknown":  # a break for a lease key the client never asked for
            body = lease_break(b"\xab" * 16)
            save_corpus("fuzz_break", hdr(OPLOCK_BREAK, 0xFFFFFFFFFFFFFFFF, tree=0) + body)
            self.send(hdr(OPLOCK_BREAK, 0xFFFFFFFFFFFFFFFF, tree=0) + body)

    def handle_query_dir(self, mid):
        if self.qdir_done:
            return self.reply(QUERY_DIRECTORY, mid, error_body(), NO_MORE_FILES)
        self.qdir_done = True
        u = lambda s: s.encode("utf-16-le")
        names = [u("."), u(".."), u("file")]
        if CASE == "dirent_dotdot":
            names = [u("."), u(".."), u(".."), u("file")]
        elif CASE == "dirent_slash":
            names = [u("."), u("a/b")]
        elif CASE == "dirent_nul":
            names = [u("."), u("x\0y")]
        buf = dir_buffer(names)
        body = query_dir_body(buf)
        if CASE == "query_dir_oob":  # OutputBufferLength far beyond the frame
            body = query_dir_body(buf, length=0x10000)
        elif CASE == "dirent_next_oob":  # NextEntryOffset past the end of the buffer
            buf = struct.pack("<I", 0x7FFFFFF8) + buf[4:]
            body = query_dir_body(buf)
        elif CASE == "next_command_loop":  # NextCommand that wraps back to this message (2^32 - 64)
            self.send(hdr(QUERY_DIRECTORY, mid, next_cmd=0xFFFFFFC0) + body)
            save_corpus("fuzz_core", hdr(QUERY_DIRECTORY, mid, next_cmd=0xFFFFFFC0) + body)
            return
        elif CASE == "next_command_underflow":  # NextCommand smaller than a header
            self.send(hdr(QUERY_DIRECTORY, mid, next_cmd=8) + body)
            save_corpus("fuzz_core", hdr(QUERY_DIRECTORY, mid, next_cmd=8) + body)
            return
        elif CASE == "next_command_misaligned":  # the next message at an odd offset
            m1 = hdr(QUERY_DIRECTORY, mid, next_cmd=64 + len(body) + 1) + body + b"\0"
            self.send(m1 + hdr(QUERY_DIRECTORY, mid + 1) + error_body())
            save_corpus("fuzz_core", m1 + hdr(QUERY_DIRECTORY, mid + 1) + error_body())
            return
        if CASE.startswith("dirent") or CASE == "query_dir_oob":
            save_corpus("fuzz_query_dir_rsp", hdr(QUERY_DIRECTORY, mid) + body)
            save_corpus("fuzz_fscc_dirent", buf)
        self.reply(QUERY_DIRECTORY, mid, body)

    def handle_query_info(self, m, mid):
        info_type, cls = struct.unpack_from("<BB", m, 64 + 2)
        if info_type == 1 and cls == 15:  # FileFullEaInformation (MS-FSCC 2.4.15)
            if CASE == "ea_overrun":  # EaValueLength runs past the buffer
                ea = struct.pack("<IBBH", 0, 0, 4, 0x4000) + b"user\0" + b"v"
                body = query_info_body(ea)
                save_corpus("fuzz_ea", ea)
                save_corpus("fuzz_query_info_rsp", hdr(QUERY_INFO, mid) + body)
                return self.reply(QUERY_INFO, mid, body)
            return self.reply(QUERY_INFO, mid, error_body(), 0xC0000051)  # STATUS_NO_EAS_ON_FILE
        if info_type == 1 and cls in (18, 34):  # FileAllInformation / FileNetworkOpenInformation
            a = self.last_attrs
            buf = all_info(attrs=a, size=0 if a & 0x10 else 5, file_id=self.last_id) if cls == 18 else file_times() + struct.pack("<QQII", 5, 5, a, 0)
            body = query_info_body(buf)
            if CASE == "query_info_oob":
                body = query_info_body(buf, off=0xFFF0)
                save_corpus("fuzz_query_info_rsp", hdr(QUERY_INFO, mid) + body)
            return self.reply(QUERY_INFO, mid, body)
        if info_type == 2:  # file system information: a 1 GiB volume (FileFsFullSizeInformation and friends)
            if cls == 7:
                buf = struct.pack("<QQQII", 1 << 18, 1 << 17, 1 << 17, 8, 512)
            elif cls == 3:
                buf = struct.pack("<QQII", 1 << 18, 1 << 17, 8, 512)
            else:
                return self.reply(QUERY_INFO, mid, error_body(), NOT_SUPPORTED)
            return self.reply(QUERY_INFO, mid, query_info_body(buf))
        return self.reply(QUERY_INFO, mid, error_body(), NOT_SUPPORTED)

    def handle_read(self, m, mid):
        ln, off = struct.unpack_from("<IQ", m, 64 + 4)
        data = b"hello"[off:off + ln] if off < 5 else b""
        if not data:
            return self.reply(READ, mid, error_body(), 0xC0000011)  # STATUS_END_OF_FILE
        body = read_body(data)
        if CASE == "read_length_oob":  # DataLength far beyond the frame
            body = read_body(data, length=0x100000)
            save_corpus("fuzz_read_rsp", hdr(READ, mid) + body)
        elif CASE == "read_offset_oob":  # DataOffset inside the header
            body = read_body(data, off=8)
            save_corpus("fuzz_read_rsp", hdr(READ, mid) + body)
        self.reply(READ, mid, body)

    def handle_ioctl(self, m, mid):
        ctl, = struct.unpack_from("<I", m, 64 + 4)
        if ctl == 0x000940CF and CASE == "allocated_ranges_overrun":  # FSCTL_QUERY_ALLOCATED_RANGES
            # OutputCount 16 bytes claimed past the frame, and a range running past the file's end
            out = struct.pack("<qq", 0, 1 << 62)
            body = ioctl_body(ctl, out, out_len=0x1000)
            save_corpus("fuzz_ioctl_rsp", hdr(IOCTL, mid) + body)
            return self.reply(IOCTL, mid, body)
        if ctl == 0x000940CF:
            return self.reply(IOCTL, mid, ioctl_body(ctl, struct.pack("<qq", 0, 5)))
        return self.reply(IOCTL, mid, error_body(), NOT_SUPPORTED)


def main():
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)
    with open(PORTFILE + ".tmp", "w") as f:
        f.write(str(ls.getsockname()[1]))
    os.rename(PORTFILE + ".tmp", PORTFILE)
    ls.settimeout(1)
    end = time.time() + 60
    keep = []
    while time.time() < end:
        try:
            s, _ = ls.accept()
        except socket.timeout:
            continue
        keep.append(s)
        s.settimeout(max(1, end - time.time()))
        try:
            Conn(s).serve()
        except (OSError, struct.error):
            pass
        if CASE != "pending_forever":  # keep the connection open: the client must give up by itself
            s.close()


if __name__ == "__main__":
    main()
