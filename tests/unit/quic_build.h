/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * quic_build.h - for the unit tests: client QUIC Initials built as a
 * client builds them (libcrypto), from hex. Include after cmocka.h.
 */
#ifndef NFQD_TEST_QUIC_BUILD_H
#define NFQD_TEST_QUIC_BUILD_H

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "names.h"

/* Hex (spaces allowed) into OUT; the byte count. */
static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = 0;
	unsigned v;

	while (*h) {
		if (*h == ' ' || *h == '\n') {
			h++;
			continue;
		}
		assert_int_equal(sscanf(h, "%2x", &v), 1);
		out[n++] = (uint8_t)v;
		h += 2;
	}
	return n;
}

/*
 * Protect an Initial as a client does (RFC 9001 5.3, 5.4), with libcrypto:
 * HDR (HL bytes, packet number last, PNL bytes of it) and PAYLOAD into
 * OUT; the packet length.
 */
static size_t quic_protect(uint32_t ver, const uint8_t *hdr, size_t hl,
			   size_t pnl, uint64_t pn, const uint8_t *pl,
			   size_t plen, uint8_t *out)
{
	uint8_t key[16], iv[12], hp[16], nonce[12], mask[16];
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n;
	size_t i;

	assert_int_equal(name_quic_keys(ver, hdr + 6, hdr[5], key, iv, hp), 0);
	memcpy(nonce, iv, 12);
	for (i = 0; i < 8; i++)
		nonce[11 - i] ^= (uint8_t)(pn >> (8 * i));
	memcpy(out, hdr, hl);
	assert_true(EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, key, nonce));
	assert_true(EVP_EncryptUpdate(c, NULL, &n, hdr, (int)hl));
	assert_true(EVP_EncryptUpdate(c, out + hl, &n, pl, (int)plen));
	assert_true(EVP_EncryptFinal_ex(c, out + hl + n, &n));
	assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16,
					out + hl + plen));
	assert_true(EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, hp, NULL));
	EVP_CIPHER_CTX_set_padding(c, 0);
	assert_true(EVP_EncryptUpdate(c, mask, &n, out + hl - pnl + 4, 16));
	EVP_CIPHER_CTX_free(c);
	out[0] ^= mask[0] & 0x0f;
	for (i = 0; i < pnl; i++)
		out[hl - pnl + i] ^= mask[1 + i];
	return hl + plen + 16;
}

/* The CRYPTO frame of RFC 9001 A.2 (a ClientHello for example.com). */
static const char A2_CRYPTO[] =
	"060040f1010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e868"
	"04fe3a47f06a2b69484c00000413011302010000c000000010000e00000b6578"
	"616d706c652e636f6dff01000100000a00080006001d00170018001000070005"
	"04616c706e000500050100000000003300260024001d00209370b2c9caa47fba"
	"baf4559fedba753de171fa71f50f1ce15d43e994ec74d748002b000302030400"
	"0d0010000e0403050306030203080408050806002d00020101001c0002400100"
	"3900320408ffffffffffffffff05048000ffff07048000ffff08011001048000"
	"75300901100f088394c8f03e51570806048000ffff";

#endif
