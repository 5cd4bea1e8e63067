#!/usr/bin/env python3
"""corpus_from_traffic.py CAPTURE PORT CORPUS_DIR: cut the SMB2 responses of a capture into fuzz seeds.

Reads the TCP payloads of CAPTURE (pcap/pcapng, via tshark), reassembles each connection's two
directions by sequence number, splits them into NBSS (Direct TCP) frames and the frames into SMB2
messages by NextCommand. Requests (client side) give each response its context: QUERY_INFO's
class, QUERY_DIRECTORY's class, IOCTL's control code. Every response message goes to the fuzz
target of its command (whole message: header + body), error responses to fuzz_error, headers to
fuzz_hdr, and embedded buffers (security blob, NTLMSSP challenge, FSCC info, directory entries,
IOCTL outputs, symlink file data) to their decoders' targets. Each connection also becomes one
fuzz_core stream seed (see fuzz_core.c: stream mode, every response frame mirrored by a request).
Files are named traffic-<command>-<sha1 prefix>, deduplicated by content, at most CAP per target,
each under 64 KiB. Writes only files that are not there yet.
"""
import hashlib
import os
import struct
import subprocess
import sys

CAP = 50
PER_SHAPE = 2  # files of one kind and length: answers that differ only in GUIDs, times, ids
MAX_FILE = 64 * 1024
CMDS = {0: "negotiate", 1: "session_setup", 2: "logoff", 3: "tree_connect", 4: "tree_disconnect",
        5: "create", 6: "close", 7: "flush", 8: "read", 9: "write", 10: "lock", 11: "ioctl",
        12: "cancel", 13: "echo", 14: "query_dir", 15: "notify", 16: "query_info", 17: "set_info",
        18: "break"}
TARGET = {0: "fuzz_negotiate_rsp", 1: "fuzz_session_setup_rsp", 2: "fuzz_simple_rsp",
          3: "fuzz_tree_connect_rsp", 4: "fuzz_simple_rsp", 5: "fuzz_create_rsp", 6: "fuzz_close_rsp",
          7: "fuzz_flush_rsp", 8: "fuzz_read_rsp", 9: "fuzz_write_rsp", 11: "fuzz_ioctl_rsp",
          13: "fuzz_simple_rsp", 14: "fuzz_query_dir_rsp", 16: "fuzz_query_info_rsp",
          17: "fuzz_set_info_rsp", 18: "fuzz_break"}
FILE_INFO = {18: "fuzz_fscc_all_info", 34: "fuzz_fscc_network_open_info", 15: "fuzz_ea", 100: "fuzz_posix_info"}
FS_INFO = {7: "fuzz_fscc_fs_full_size"}
DIR_CLASS = {37: "fuzz_fscc_dirent", 38: "fuzz_fscc_dirent", 100: "fuzz_posix_dirent"}
FSCTL = {0x00140204: "fuzz_validate_negotiate", 0x00140078: "fuzz_copychunk", 0x001440F2: "fuzz_copychunk",
         0x001480F2: "fuzz_copychunk", 0x000900A8: "fuzz_reparse", 0x000940CF: "fuzz_copychunk",
         0x00060194: "fuzz_dfs_referral"}
STATUS_PENDING, MORE_PROCESSING = 0x00000103, 0xC0000016


def segments(cap, port):
    """{(stream, from_server): bytes} reassembled by relative sequence number."""
    out = subprocess.run(["tshark", "-r", cap, "-o", "tcp.relative_sequence_numbers:TRUE", "-Y", "tcp.len>0",
                          "-T", "fields", "-E", "separator=;", "-e", "tcp.stream", "-e", "tcp.srcport",
                          "-e", "tcp.seq", "-e", "tcp.payload"], check=True, capture_output=True, text=True).stdout
    parts = {}
    for line in out.splitlines():
        stream, sport, seq, payload = line.split(";")
        key = (int(stream), int(sport) == port)
        parts.setdefault(key, {})[int(seq)] = bytes.fromhex(payload.replace(":", ""))
    streams = {}
    for key, segs in parts.items():
        buf, at = bytearray(), None
        for seq in sorted(segs):
            data = segs[seq]
            if at is None:
                at = seq
            if seq > at + len(buf):
                break  # a hole: keep what is contiguous
            buf += data[at + len(buf) - seq:]
        streams[key] = bytes(buf)
    return streams


def frames(buf):
    off = 0
    while off + 4 <= len(buf):
        n = struct.unpack(">I", buf[off:off + 4])[0] & 0xFFFFFF
        if off + 4 + n > len(buf):
            break
        yield buf[off + 4:off + 4 + n]
        off += 4 + n


def messages(frame):
    off = 0
    while frame[off:off + 4] == b"\xfeSMB" and off + 64 <= len(frame):
        nxt = struct.unpack_from("<I", frame, off + 20)[0]
        end = off + nxt if nxt else len(frame)
        if end > len(frame) or end <= off:
            break
        yield frame[off:end]
        if not nxt:
            break
        off = end


class Corpus:
    def __init__(self, root):
        self.root, self.count, self.seen, self.added, self.shapes = root, {}, {}, {}, {}

    def put(self, target, what, data):
        if not data or len(data) >= MAX_FILE:
            return
        d = os.path.join(self.root, target)
        if not os.path.isdir(d):
            return
        if target not in self.seen:
            self.seen[target] = set()
            for f in os.listdir(d):
                with open(os.path.join(d, f), "rb") as fh:
                    self.seen[target].add(hashlib.sha1(fh.read()).hexdigest())
            self.count[target] = sum(1 for f in os.listdir(d) if f.startswith("traffic-"))
        h = hashlib.sha1(data).hexdigest()
        shape = (target, what, len(data))
        if h in self.seen[target] or self.count[target] >= CAP or self.shapes.get(shape, 0) >= PER_SHAPE:
            return
        self.shapes[shape] = self.shapes.get(shape, 0) + 1
        self.seen[target].add(h)
        self.count[target] += 1
        self.added[target] = self.added.get(target, 0) + 1
        with open(os.path.join(d, f"traffic-{what}-{h[:10]}"), "wb") as fh:
            fh.write(data)


def buf_at(msg, off_field, len_field, off_fmt="<H", len_fmt="<I"):
    off = struct.unpack_from(off_fmt, msg, 64 + off_field)[0]
    n = struct.unpack_from(len_fmt, msg, 64 + len_field)[0]
    return msg[off:off + n] if off + n <= len(msg) else b""


def cut(corpus, msg, req):
    cmd, status = struct.unpack_from("<H", msg, 12)[0], struct.unpack_from("<I", msg, 8)[0]
    name = CMDS.get(cmd, f"cmd{cmd}")
    corpus.put("fuzz_hdr", name, msg[:64])
    ssize = struct.unpack_from("<H", msg, 64)[0] if len(msg) >= 66 else 0
    if status not in (0, MORE_PROCESSING) and ssize == 9 or status == STATUS_PENDING:
        corpus.put("fuzz_error", f"{name}-{status:08x}", msg)
        return
    if cmd in TARGET:
        corpus.put(TARGET[cmd], name, msg)
    try:
        if cmd == 1:
            blob = buf_at(msg, 4, 6, "<H", "<H")
            corpus.put("fuzz_spnego", "session_setup", blob)
            i = blob.find(b"NTLMSSP\0\x02\0\0\0")
            if i >= 0:
                corpus.put("fuzz_ntlmssp_challenge", "session_setup", blob[i:])
        elif cmd == 0:
            corpus.put("fuzz_spnego", "negotiate", buf_at(msg, 56, 58, "<H", "<H"))
        elif cmd == 16 and req:
            info = buf_at(msg, 2, 4)
            itype, cls = req.get("info_type"), req.get("class")
            t = FILE_INFO.get(cls) if itype == 1 else FS_INFO.get(cls) if itype == 2 else None
            if t:
                corpus.put(t, f"query_info-{cls}", info)
        elif cmd == 14 and req:
            t = DIR_CLASS.get(req.get("class"))
            if t:
                corpus.put(t, f"query_dir-{req['class']}", buf_at(msg, 2, 4))
        elif cmd == 11 and req:
            t = FSCTL.get(req.get("ctl"))
            if t:
                corpus.put(t, f"ioctl-{req['ctl']:08x}", buf_at(msg, 32, 36, "<I"))
        elif cmd == 8:
            data = buf_at(msg, 2, 4, "<B")
            if data.startswith(b"XSym\n"):
                corpus.put("fuzz_mfsymlink", "read", data)
            corpus.put("fuzz_read_rsp_head", "read", struct.pack("<I", len(msg)) + msg[:80])
    except struct.error:
        pass


def request_info(msg):
    cmd = struct.unpack_from("<H", msg, 12)[0]
    r = {"cmd": cmd}
    try:
        if cmd == 16:
            r["info_type"], r["class"] = msg[66], msg[67]
        elif cmd == 14:
            r["class"] = msg[66]
        elif cmd == 11:
            r["ctl"] = struct.unpack_from("<I", msg, 68)[0]
    except IndexError:
        pass
    return r


def core_stream(rsp_frames):
    """fuzz_core stream-mode seed: record 0 flags 0x80 (stream mode); every frame mirrored (0x08)
    unless it is a final answer after an interim one or a break (MessageId all ones)."""
    out, seen = bytearray(), set()
    for f in rsp_frames:
        mid = struct.unpack_from("<Q", f, 24)[0] if len(f) >= 64 and f[:4] == b"\xfeSMB" else None
        flags = 0x08 if mid is not None and mid != 0xFFFFFFFFFFFFFFFF and mid not in seen else 0
        if mid is not None:
            seen.add(mid)
        if not out:
            flags |= 0x80
        out += bytes([flags]) + len(f).to_bytes(3, "big") + f
    return bytes(out)


def main():
    cap, port, root = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    streams = segments(cap, port)
    corpus = Corpus(root)
    nstreams = sorted({s for s, _ in streams})
    shapes = set()
    for s in nstreams:
        reqs = {}
        for f in frames(streams.get((s, False), b"")):
            for m in messages(f):
                reqs[struct.unpack_from("<Q", m, 24)[0]] = request_info(m)
        rsp = [f for f in frames(streams.get((s, True), b""))]
        for f in rsp:
            for m in messages(f):
                cut(corpus, m, reqs.get(struct.unpack_from("<Q", m, 24)[0]))
        # One stream seed per distinct command sequence.
        shape = tuple(struct.unpack_from("<H", f, 12)[0] for f in rsp if len(f) >= 64)
        seed = core_stream(rsp)
        if shape not in shapes and len(seed) < MAX_FILE:
            shapes.add(shape)
            corpus.put("fuzz_core", "stream", seed)
    for t in sorted(corpus.added):
        print(f"{t}: +{corpus.added[t]}")
    print(f"{len(nstreams)} connections, {sum(corpus.added.values())} new seed files")


if __name__ == "__main__":
    main()
