#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_ntlmssp_challenge and fuzz_spnego (run from anywhere).

CHALLENGE messages follow MS-NLMP 2.2.1.2; spec_4_2_4_3 is the CHALLENGE_MESSAGE of the MS-NLMP
4.2.4.3 NTLMv2 example. SPNEGO tokens follow RFC 4178 / MS-SPNG 2.2.1 (DER by hand below)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OID_SPNEGO = bytes.fromhex("2b0601050502")
OID_NTLMSSP = bytes.fromhex("2b06010401823702020a")
OID_KRB5 = bytes.fromhex("2a864886f712010202")
OID_MSKRB5 = bytes.fromhex("2a864882f712010202")


def der(tag, body):
    n = len(body)
    if n < 0x80:
        hdr = bytes([tag, n])
    elif n < 0x100:
        hdr = bytes([tag, 0x81, n])
    else:
        hdr = bytes([tag, 0x82, n >> 8, n & 0xFF])
    return hdr + body


def u16(s):
    return s.encode("utf-16le")


def av(avid, val):
    return struct.pack("<HH", avid, len(val)) + val


def challenge(flags, target_name, target_info, version=True):
    hdr_len = 56 if version else 48
    tn_off = hdr_len
    ti_off = tn_off + len(target_name)
    msg = b"NTLMSSP\0" + struct.pack("<I", 2)
    msg += struct.pack("<HHI", len(target_name), len(target_name), tn_off)
    msg += struct.pack("<I", flags) + bytes.fromhex("0123456789abcdef") + bytes(8)
    msg += struct.pack("<HHI", len(target_info), len(target_info), ti_off)
    if version:
        msg += bytes.fromhex("060070170000000f")  # Version (2.2.2.10)
    return msg + target_name + target_info


SPEC_TI = av(2, u16("Domain")) + av(1, u16("Server")) + av(0, b"")
SPEC = challenge(0xE28A8233, u16("Server"), SPEC_TI)
SAMBA_TI = (av(2, u16("SAMBA")) + av(1, u16("FILESERVER")) + av(4, u16("samba.example"))
            + av(3, u16("fileserver.samba.example")) + av(7, struct.pack("<Q", 133000000000000000))
            + av(0, b""))
SAMBA = challenge(0xE28A8215, u16("SAMBA"), SAMBA_TI)
MINIMAL = challenge(0x00088201, b"", b"", version=False)


def neg_token_resp(state=None, mech=False, token=None, mic=None):
    body = b""
    if state is not None:
        body += der(0xA0, der(0x0A, bytes([state])))
    if mech:
        body += der(0xA1, der(0x06, OID_NTLMSSP))
    if token is not None:
        body += der(0xA2, der(0x04, token))
    if mic is not None:
        body += der(0xA3, der(0x04, mic))
    return der(0xA1, der(0x30, body))


def neg_token_init2_hint():
    mechs = der(0x30, der(0x06, OID_MSKRB5) + der(0x06, OID_KRB5) + der(0x06, OID_NTLMSSP))
    hints = der(0x30, der(0xA0, der(0x1B, b"not_defined_in_RFC4178@please_ignore")))
    body = der(0xA0, mechs) + der(0xA3, hints)
    return der(0x60, der(0x06, OID_SPNEGO) + der(0xA0, der(0x30, body)))


def write(target, name, data):
    with open(os.path.join(HERE, target, name), "wb") as f:
        f.write(data)


write("fuzz_ntlmssp_challenge", "spec_4_2_4_3.bin", SPEC)
write("fuzz_ntlmssp_challenge", "samba_like.bin", SAMBA)
write("fuzz_ntlmssp_challenge", "minimal.bin", MINIMAL)
write("fuzz_spnego", "resp_challenge_spec.bin", neg_token_resp(1, True, SPEC))
write("fuzz_spnego", "resp_challenge_samba.bin", neg_token_resp(1, True, SAMBA))
write("fuzz_spnego", "resp_final_mic.bin", neg_token_resp(0, False, None, bytes([1, 0, 0, 0]) + bytes(12)))
write("fuzz_spnego", "hint_negtokeninit2.bin", neg_token_init2_hint())
