# SPDX-License-Identifier: GPL-2.0-or-later
"""craft.py - the names tests' crafted payloads (names_crafted.sh,
names_forward.sh): a real ClientHello (OpenSSL's, via Python's ssl), and
QUIC v1 client Initials sealed with RFC 9001's Initial keys (python3-
cryptography). Imported by the tests' scapy senders."""
import struct
import ssl

from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def hello(name):
    """The TLS record of a ClientHello for NAME."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    i, o = ssl.MemoryBIO(), ssl.MemoryBIO()
    s = ctx.wrap_bio(i, o, server_hostname=name)
    try:
        s.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return o.read()


def hkdf(salt, ikm, label=None, length=32):
    """HKDF-Extract (no LABEL) or TLS 1.3's HKDF-Expand-Label."""
    if label is None:
        h = hmac.HMAC(salt, hashes.SHA256())
        h.update(ikm)
        return h.finalize()
    full = b"tls13 " + label
    info = struct.pack(">HB", length, len(full)) + full + b"\x00"
    h = hmac.HMAC(ikm, hashes.SHA256())
    h.update(info + b"\x01")
    return h.finalize()[:length]


def initial(frames, dcid, keyid=None):
    """A v1 client Initial: FRAMES, padded; sealed with KEYID's keys."""
    salt = bytes.fromhex("38762cf7f55934b34d179ae6a4c80cadccbb7f0a")
    sec = hkdf(salt, keyid or dcid)
    sec = hkdf(None, sec, b"client in")
    key, iv, hp = (hkdf(None, sec, b"quic key", 16),
                   hkdf(None, sec, b"quic iv", 12),
                   hkdf(None, sec, b"quic hp", 16))
    pl = frames + bytes(max(0, 1162 - len(frames)))
    hdr = (b"\xc3\x00\x00\x00\x01" + bytes([len(dcid)]) + dcid + b"\x00\x00" +
           struct.pack(">H", 0x4000 | (len(pl) + 20)) + b"\x00\x00\x00\x00")
    ct = AESGCM(key).encrypt(iv, pl, hdr)
    enc = Cipher(algorithms.AES(hp), modes.ECB()).encryptor()
    mask = enc.update(ct[:16]) + enc.finalize()
    h = bytearray(hdr)
    h[0] ^= mask[0] & 0x0f
    for i in range(4):
        h[-4 + i] ^= mask[1 + i]
    return bytes(h) + ct


def crypto(data, off=0):
    """A CRYPTO frame of DATA at OFF."""
    return b"\x06" + struct.pack(">HH", 0x4000 | off, 0x4000 | len(data)) + data
