/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_names_quic.c - libFuzzer target for the QUIC Initial parser
 * (src/name_quic.c). The input is tried as a datagram as it is (headers,
 * lengths, tags) and, since a fuzzer cannot forge a tag, also as the
 * plaintext payload of an Initial this target protects with the client
 * Initial keys (RFC 9001 5): the frames behind a valid tag are fuzzed too.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include <openssl/evp.h>

#include "names.h"

static const uint8_t dcid[8] = { 0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08 };

/* Protect PL (LEN bytes) as a 4-byte-numbered v1 Initial into OUT. */
static size_t protect(const uint8_t *pl, size_t len, uint8_t *out)
{
	uint8_t key[16], iv[12], hp[16], mask[16];
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	size_t hl = 0, plen = len + 4 + 16, i;
	int n;

	out[hl++] = 0xc3;
	memcpy(out + hl, "\0\0\0\1", 4);
	hl += 4;
	out[hl++] = 8;
	memcpy(out + hl, dcid, 8);
	hl += 8;
	out[hl++] = 0;			/* SCID */
	out[hl++] = 0;			/* token */
	out[hl++] = (uint8_t)(0x40 | plen >> 8);
	out[hl++] = (uint8_t)plen;
	memcpy(out + hl, "\0\0\0\0", 4);
	hl += 4;
	assert(name_quic_keys(QUIC_V1, dcid, 8, key, iv, hp) == 0);
	assert(c);
	assert(EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, key, iv) == 1);
	assert(EVP_EncryptUpdate(c, NULL, &n, out, (int)hl) == 1);
	assert(EVP_EncryptUpdate(c, out + hl, &n, pl, (int)len) == 1);
	assert(EVP_EncryptFinal_ex(c, out + hl + n, &n) == 1);
	assert(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16,
				   out + hl + len) == 1);
	assert(EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, hp, NULL) == 1);
	EVP_CIPHER_CTX_set_padding(c, 0);
	assert(EVP_EncryptUpdate(c, mask, &n, out + hl, 16) == 1);
	EVP_CIPHER_CTX_free(c);
	out[0] ^= mask[0] & 0x0f;
	for (i = 0; i < 4; i++)
		out[hl - 4 + i] ^= mask[1 + i];
	return hl + len + 16;
}

static void check(const struct quic_initial *q, enum name_result r)
{
	unsigned i;

	if (r != NAME_DONE)
		return;
	assert(q->n_frames <= QUIC_MAX_FRAMES);
	for (i = 0; i < q->n_frames; i++)
		assert((size_t)q->frames[i].pos + q->frames[i].len <=
		       sizeof(q->plain));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct quic_initial q;
	static uint8_t pkt[QUIC_MAX_DGRAM + 64];
	struct name_out o;
	size_t n;

	check(&q, name_quic_initial(data, size, &q));
	if (size < 1 || size > 1500)
		return 0;
	n = protect(data, size, pkt);
	check(&q, name_quic_initial(pkt, n, &q));
	if (q.n_frames)
		(void)name_tls_handshake(q.plain + q.frames[0].pos,
					 q.frames[0].len, &o);
	return 0;
}
