#!/usr/bin/env python3
"""gen_cve_seeds.py [CORPUS_DIR]: regression inputs shaped like the Linux SMB client's recent
out-of-bounds CVEs, for the decoders of ours that parse the same fields. Each file is named
cve-<id>-<what>; the fuzzcorpus.* ctest entries replay them (and mutations of them) under the
sanitizers, and `make fuzz` starts from them.

- CVE-2023-6606 (smbCalcSize: a length from the server trusted past the buffer): ERROR responses
  whose ByteCount or error-context lengths run past the message (MS-SMB2 2.2.2, 2.2.2.1, 2.2.2.2.1),
  and NTLMSSP CHALLENGE messages whose TargetName/TargetInfo fields or AV pairs point outside the
  token (MS-NLMP 2.2.1.2, 2.2.2.1).
- CVE-2024-0565 (receive_encrypted_standard / smb2 compound: a NextCommand walking out of the
  frame): fuzz_core stream-mode inputs with a valid SMB 2.1 handshake then a compound whose
  NextCommand points past the end, wraps, is shorter than a header or leaves a truncated second
  header; a transform frame whose OriginalMessageSize exceeds the frame (also for fuzz_transform).
- CVE-2023-52434 (smb2_parse_contexts: context offsets and lengths not checked against the
  buffer): NEGOTIATE responses with negotiate contexts out of the frame, counts and inner lengths
  larger than the context (2.2.4, 2.2.4.1.x), and CREATE responses whose create contexts have Next,
  NameOffset/NameLength or DataOffset/DataLength outside the buffer, or known contexts (RqLs, MxAc,
  QFid) with too little data (2.2.14.2).
"""
import os
import struct
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    with open(os.path.join(ROOT, target, name), "wb") as f:
        f.write(data)


def hdr(cmd, mid, status=0, next_cmd=0, flags=1, credits=64, sid=0x1000000001, tid=1):
    return struct.pack("<4sHHIHHIIQIIQ16s", b"\xfeSMB", 64, 1, status, cmd, credits, flags, next_cmd, mid, 0, tid, sid,
                       b"\0" * 16)


def error_rsp(cmd, mid, status, body_tail=b"", byte_count=None, ctx_count=0, next_cmd=0):
    bc = len(body_tail) if byte_count is None else byte_count
    return hdr(cmd, mid, status, next_cmd) + struct.pack("<HBBI", 9, ctx_count, 0, bc) + (body_tail or b"\0")


# ---- CVE-2023-6606: error responses ----
put("fuzz_error", "cve-2023-6606-bytecount_past_end", error_rsp(5, 4, 0xC0000034, b"\0" * 8, byte_count=0xFFFFFFFF))
put("fuzz_error", "cve-2023-6606-bytecount_one_past", error_rsp(5, 4, 0xC0000034, b"\0" * 8, byte_count=9))
ctx = struct.pack("<II", 0x7FFFFFF0, 0) + b"\0" * 8  # ErrorDataLength far past the message
put("fuzz_error", "cve-2023-6606-error_context_len", error_rsp(5, 4, 0xC0000034, ctx, ctx_count=1))
ctx = struct.pack("<II", 8, 0) + b"\0" * 8
put("fuzz_error", "cve-2023-6606-error_context_count", error_rsp(5, 4, 0xC0000034, ctx, ctx_count=200))
# STATUS_STOPPED_ON_SYMLINK with a symbolic link error response whose name offsets are outside.
sym = struct.pack("<IIIHHHHHHI", 0xFFFF, 0x4C4D5953, 0xA000000C, 0x100, 0, 0x7FF0, 0x40, 0x10, 0xFFF0, 0) + \
    "a\\b".encode("utf-16-le")
put("fuzz_error", "cve-2023-6606-symlink_names_oob", error_rsp(5, 4, 0x8000002D, sym))

# ---- CVE-2023-6606: NTLMSSP CHALLENGE ----


def challenge(tn=(0, 0, 56), ti=(0, 0, 56), payload=b"", flags=0xE2898215):
    return (b"NTLMSSP\0" + struct.pack("<I", 2) + struct.pack("<HHI", *tn) + struct.pack("<I", flags) + b"\x11" * 8 +
            b"\0" * 8 + struct.pack("<HHI", *ti) + b"\x06\x01\xb1\x1d\0\0\0\x0f" + payload)


name = "SRV".encode("utf-16-le")
av_ok = struct.pack("<HH", 2, len(name)) + name + struct.pack("<HH", 0, 0)
put("fuzz_ntlmssp_challenge", "cve-2023-6606-targetinfo_past_end",
    challenge(ti=(len(av_ok) + 64, len(av_ok) + 64, 56), payload=av_ok))
put("fuzz_ntlmssp_challenge", "cve-2023-6606-targetinfo_offset_wrap",
    challenge(ti=(0x20, 0x20, 0xFFFFFFF0), payload=av_ok))
put("fuzz_ntlmssp_challenge", "cve-2023-6606-targetname_past_end",
    challenge(tn=(0x200, 0x200, 56), ti=(len(av_ok), len(av_ok), 56), payload=av_ok))
put("fuzz_ntlmssp_challenge", "cve-2023-6606-avpair_len_past_targetinfo",
    challenge(ti=(8, 8, 56), payload=struct.pack("<HH", 2, 0x400) + name + b"\0" * 4))
put("fuzz_ntlmssp_challenge", "cve-2023-6606-avpair_no_eol",
    challenge(ti=(4 + len(name), 4 + len(name), 56), payload=struct.pack("<HH", 2, len(name)) + name))
put("fuzz_ntlmssp_challenge", "cve-2023-6606-targetinfo_empty", challenge(ti=(0, 0, 56)))
put("fuzz_ntlmssp_challenge", "cve-2023-6606-header_truncated", challenge()[:40])

# ---- CVE-2024-0565: compounds with a bad NextCommand, after a valid handshake (fuzz_core stream) ----


def rec(flags, frame):
    return bytes([flags]) + len(frame).to_bytes(3, "big") + frame


NEG_21 = hdr(0, 0, sid=0, tid=0) + struct.pack("<HHHH16sIIIIQQHHI", 65, 1, 0x0210, 0, b"G" * 16, 7, 65536, 65536, 65536,
                                              0, 0, 128, 0, 0) + b"\0" * 8
SETUP_OK = hdr(1, 1) + struct.pack("<HHHH", 9, 0, 72, 0) + b"\0"
HANDSHAKE = rec(0x88, NEG_21) + rec(0x08, SETUP_OK)
TC_OK = hdr(3, 2) + struct.pack("<HBBIII", 16, 1, 0, 0, 0, 0x1F01FF)


def create_rsp_body(ctx=b"", ctx_off=None, ctx_len=None):
    off = (64 + 88) if ctx else 0
    return struct.pack("<HBBIQQQQQQII16sII", 89, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x20, 0, b"\x01" * 16,
                       off if ctx_off is None else ctx_off, len(ctx) if ctx_len is None else ctx_len) + (ctx or b"\0")


def close_rsp(mid, flags=1):
    return hdr(6, mid, flags=flags) + struct.pack("<HHIQQQQQQI", 60, 0, 0, 0, 0, 0, 0, 0, 0, 0)


def compound(next_cmd, second_len=None):
    first = hdr(5, 3, next_cmd=next_cmd) + create_rsp_body()
    first += b"\0" * (-len(first) % 8)
    second = close_rsp(4, flags=1 | 4)
    if second_len is not None:
        second = second[:second_len]
    return first, second


base = HANDSHAKE + rec(0x08, TC_OK)
for what, nxt, cut in (("next_past_end", 0x1000, None), ("next_wraps", 0xFFFFFFF8, None), ("next_below_header", 8, None),
                       ("next_second_header_truncated", None, 20), ("next_unaligned", 156, None)):
    first, second = compound(0)
    n = nxt if nxt is not None else len(first)
    first, second = compound(n, cut)
    frame = first + second
    put("fuzz_core", f"cve-2024-0565-{what}", base + rec(0x08, frame))
# A transform frame claiming more plaintext than it carries, on a session without keys.
tf = struct.pack("<4s16s16sIHHQ", b"\xfdSMB", b"\0" * 16, b"\0" * 16, 0x00FFFFFF, 0, 1, 0x1000000001) + b"\0" * 64
put("fuzz_core", "cve-2024-0565-transform_size_past_end", base + rec(0x08, tf))
put("fuzz_transform", "cve-2024-0565-transform_size_past_end", tf)
tf0 = struct.pack("<4s16s16sIHHQ", b"\xfdSMB", b"\0" * 16, b"\0" * 16, 0, 0, 1, 0x1000000001)
put("fuzz_transform", "cve-2024-0565-transform_size_zero", tf0)

# ---- CVE-2023-52434: negotiate contexts ----


def neg311(contexts, count=None, ctx_off=None):
    sec = b"\0" * 8
    off = 64 + 64 + len(sec)
    off8 = off + (-off % 8)
    body = struct.pack("<HHHH16sIIIIQQHHI", 65, 1, 0x0311, len(contexts) if count is None else count, b"G" * 16, 0x7F,
                       65536, 65536, 65536, 0, 0, 128, len(sec), off8 if ctx_off is None else ctx_off)
    tail = sec + b"\0" * (off8 - off)
    return hdr(0, 0, sid=0, tid=0) + body + tail + b"".join(contexts)


def nctx(ctype, data, dlen=None):
    c = struct.pack("<HHI", ctype, len(data) if dlen is None else dlen, 0) + data
    return c + b"\0" * (-len(c) % 8)


preauth = nctx(1, struct.pack("<HHH", 1, 32, 1) + b"S" * 32)
cipher = nctx(2, struct.pack("<HH", 1, 2))
put("fuzz_negotiate_rsp", "cve-2023-52434-ctx_offset_past_end", neg311([preauth, cipher], ctx_off=0x10000))
put("fuzz_negotiate_rsp", "cve-2023-52434-ctx_offset_wrap", neg311([preauth, cipher], ctx_off=0xFFFFFFF8))
put("fuzz_negotiate_rsp", "cve-2023-52434-ctx_count_too_big", neg311([preauth, cipher], count=0xFFFF))
put("fuzz_negotiate_rsp", "cve-2023-52434-ctx_datalen_past_end", neg311([preauth, nctx(2, struct.pack("<HH", 1, 2), 0xFFFF)]))
put("fuzz_negotiate_rsp", "cve-2023-52434-preauth_hashcount_past_ctx",
    neg311([nctx(1, struct.pack("<HHH", 0xFFFF, 0, 1)), cipher]))
put("fuzz_negotiate_rsp", "cve-2023-52434-preauth_salt_past_ctx",
    neg311([nctx(1, struct.pack("<HHH", 1, 0xFFF0, 1) + b"S" * 4), cipher]))
put("fuzz_negotiate_rsp", "cve-2023-52434-cipher_count_past_ctx", neg311([preauth, nctx(2, struct.pack("<HH", 0x4000, 2))]))
put("fuzz_negotiate_rsp", "cve-2023-52434-ctx_header_truncated", neg311([preauth])[:-36] + b"\x02\0\x04")
put("fuzz_negotiate_rsp", "cve-2023-52434-signing_count_past_ctx",
    neg311([preauth, cipher, nctx(8, struct.pack("<HH", 0x100, 1))]))
# The same on the engine: a stream whose NEGOTIATE answer carries the bad contexts.
put("fuzz_core", "cve-2023-52434-negotiate_ctx_datalen", rec(0x88, neg311([preauth, nctx(2, b"\x01\0\x02\0", 0xFFFF)])))

# ---- CVE-2023-52434: create contexts (smb2_parse_contexts) ----


def cctx(name, data, nxt=0, name_off=None, name_len=None, data_off=None, data_len=None):
    noff = 16
    doff = (noff + len(name) + 7) & ~7 if data else 0
    c = struct.pack("<IHHHHI", nxt, noff if name_off is None else name_off, len(name) if name_len is None else name_len, 0,
                    doff if data_off is None else data_off, len(data) if data_len is None else data_len)
    c += name + b"\0" * ((doff - noff - len(name)) if data else 0) + data
    return c + b"\0" * (-len(c) % 8)


def create_rsp(ctx, **kw):
    return hdr(5, 3) + create_rsp_body(ctx, **kw)


mxac = cctx(b"MxAc", struct.pack("<II", 0, 0x1F01FF))
lease2 = cctx(b"RqLs", b"K" * 16 + struct.pack("<IIQ", 7, 0, 0) + b"P" * 16 + struct.pack("<HH", 1, 0) + b"\0" * 4)
put("fuzz_create_rsp", "cve-2023-52434-contexts_past_end", create_rsp(mxac, ctx_len=0x1000))
put("fuzz_create_rsp", "cve-2023-52434-contexts_offset_wrap", create_rsp(mxac, ctx_off=0xFFFFFFF0))
put("fuzz_create_rsp", "cve-2023-52434-next_past_contexts",
    create_rsp(cctx(b"MxAc", struct.pack("<II", 0, 0x1F01FF), nxt=0x100)))
put("fuzz_create_rsp", "cve-2023-52434-next_below_context", create_rsp(cctx(b"MxAc", b"\0" * 8, nxt=8) + mxac))
put("fuzz_create_rsp", "cve-2023-52434-name_past_context", create_rsp(cctx(b"MxAc", b"\0" * 8, name_off=0xFFF0)))
put("fuzz_create_rsp", "cve-2023-52434-name_len_past_context", create_rsp(cctx(b"MxAc", b"\0" * 8, name_len=0x400)))
put("fuzz_create_rsp", "cve-2023-52434-data_past_context", create_rsp(cctx(b"MxAc", b"\0" * 8, data_off=0x7FF0)))
put("fuzz_create_rsp", "cve-2023-52434-data_len_wrap", create_rsp(cctx(b"MxAc", b"\0" * 8, data_len=0xFFFFFFF8)))
put("fuzz_create_rsp", "cve-2023-52434-lease_data_short", create_rsp(cctx(b"RqLs", b"K" * 4)))
put("fuzz_create_rsp", "cve-2023-52434-lease_v2_data_short", create_rsp(cctx(b"RqLs", b"K" * 40)))
put("fuzz_create_rsp", "cve-2023-52434-mxac_data_short", create_rsp(cctx(b"MxAc", b"\0" * 4)))
put("fuzz_create_rsp", "cve-2023-52434-qfid_data_short", create_rsp(cctx(b"QFid", b"\0" * 8)))
put("fuzz_create_rsp", "cve-2023-52434-valid_then_oob", create_rsp(lease2[:0] + cctx(b"MxAc", struct.pack("<II", 0, 1),
                                                                                      nxt=len(mxac)) +
                                                                  cctx(b"RqLs", b"K" * 8, data_len=52)))
print("written")
