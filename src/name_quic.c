/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * name_quic.c - the CRYPTO frames of a client's QUIC Initial packets
 * (RFC 9000 17.2.2, 19.6), decrypted with the Initial secrets of RFC 9001
 * 5.2 (v1) and RFC 9369 3.3 (v2). Every primitive (HKDF, AES-128-GCM,
 * AES-128-ECB for header protection) is libcrypto's; nothing here is
 * cryptography of its own.
 *
 * The packet number is taken as sent (no earlier packet is known): a
 * client's first Initials are numbered from 0.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "names.h"

static const uint8_t salt_v1[20] = {
	0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
	0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a,
};
static const uint8_t salt_v2[20] = {
	0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
	0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9,
};

/* Fetched once, shared read-only by every thread. */
static EVP_KDF *hkdf;
static EVP_CIPHER *gcm, *ecb;
static pthread_once_t fetch_once = PTHREAD_ONCE_INIT;

static void fetch(void)
{
	hkdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	gcm = EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL);
	ecb = EVP_CIPHER_fetch(NULL, "AES-128-ECB", NULL);
}

/* HKDF-Extract (MODE extract) or HKDF-Expand (info set) with SHA-256. */
static int kdf(int mode, const uint8_t *key, size_t klen, const uint8_t *salt,
	       size_t slen, const uint8_t *info, size_t ilen, uint8_t *out,
	       size_t olen)
{
	OSSL_PARAM params[5], *p = params;
	EVP_KDF_CTX *ctx;
	int rc;

	if (!hkdf)
		return -EIO;
	ctx = EVP_KDF_CTX_new(hkdf);
	if (!ctx)
		return -EIO;
	*p++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
						(char *)"SHA256", 0);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
						 (void *)key, klen);
	if (salt)
		*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
							 (void *)salt, slen);
	else
		*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
							 (void *)info, ilen);
	*p = OSSL_PARAM_construct_end();
	rc = EVP_KDF_derive(ctx, out, olen, params) == 1 ? 0 : -EIO;
	EVP_KDF_CTX_free(ctx);
	return rc;
}

/* HKDF-Expand-Label(SECRET, LABEL, "", LEN) of RFC 8446 7.1. */
static int expand_label(const uint8_t secret[32], const char *label,
			uint8_t *out, size_t len)
{
	uint8_t info[2 + 1 + 255 + 1];
	size_t ll = strlen(label), n = 0;

	info[n++] = (uint8_t)(len >> 8);
	info[n++] = (uint8_t)len;
	info[n++] = (uint8_t)(6 + ll);
	memcpy(info + n, "tls13 ", 6);
	n += 6;
	memcpy(info + n, label, ll);
	n += ll;
	info[n++] = 0;
	return kdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, secret, 32, NULL, 0, info, n,
		   out, len);
}

int name_quic_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len,
		   uint8_t key[16], uint8_t iv[12], uint8_t hp[16])
{
	uint8_t initial[32], client[32];
	bool v2 = version == QUIC_V2;
	int rc;

	if (version != QUIC_V1 && !v2)
		return -EINVAL;
	pthread_once(&fetch_once, fetch);
	rc = kdf(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, dcid, dcid_len,
		 v2 ? salt_v2 : salt_v1, 20, NULL, 0, initial, 32);
	if (!rc)
		rc = expand_label(initial, "client in", client, 32);
	if (!rc)
		rc = expand_label(client, v2 ? "quicv2 key" : "quic key", key, 16);
	if (!rc)
		rc = expand_label(client, v2 ? "quicv2 iv" : "quic iv", iv, 12);
	if (!rc)
		rc = expand_label(client, v2 ? "quicv2 hp" : "quic hp", hp, 16);
	return rc;
}

/* AES-128-ECB of one block: the header protection mask. */
static int hp_mask(const uint8_t hp[16], const uint8_t sample[16],
		   uint8_t mask[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0, ok;

	if (!c)
		return -EIO;
	ok = EVP_EncryptInit_ex2(c, ecb, hp, NULL, NULL) &&
	     EVP_CIPHER_CTX_set_padding(c, 0) &&
	     EVP_EncryptUpdate(c, mask, &n, sample, 16) && n == 16;
	EVP_CIPHER_CTX_free(c);
	return ok ? 0 : -EIO;
}

/* AES-128-GCM open: CT (LEN bytes, tag after it) into OUT. */
static int gcm_open(const uint8_t key[16], const uint8_t nonce[12],
		    const uint8_t *aad, size_t alen, const uint8_t *ct,
		    size_t len, uint8_t *out)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0, ok;

	if (!c)
		return -EIO;
	ok = EVP_DecryptInit_ex2(c, gcm, key, nonce, NULL) &&
	     EVP_DecryptUpdate(c, NULL, &n, aad, (int)alen) &&
	     EVP_DecryptUpdate(c, out, &n, ct, (int)len) &&
	     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16,
				 (void *)(ct + len)) &&
	     EVP_DecryptFinal_ex(c, out + n, &n);
	EVP_CIPHER_CTX_free(c);
	return ok ? 0 : -EBADMSG;
}

/* A QUIC variable-length integer at *AT; false past END. */
static bool varint(const uint8_t *p, size_t end, size_t *at, uint64_t *v)
{
	size_t n, i;

	if (*at >= end)
		return false;
	n = (size_t)1 << (p[*at] >> 6);
	if (n > end - *at)
		return false;
	*v = p[*at] & 0x3f;
	for (i = 1; i < n; i++)
		*v = *v << 8 | p[*at + i];
	*at += n;
	return true;
}

/* The frames of one decrypted payload PL (LEN bytes at out->plain + BASE). */
static enum name_result frames(struct quic_initial *out, size_t base,
			       size_t len)
{
	const uint8_t *p = out->plain + base;
	size_t at = 0;
	uint64_t v, n, i;

	while (at < len) {
		uint8_t type = p[at++];

		switch (type) {
		case 0x00:	/* PADDING */
		case 0x01:	/* PING */
			break;
		case 0x02:	/* ACK */
		case 0x03:	/* ACK_ECN */
			if (!varint(p, len, &at, &v) || !varint(p, len, &at, &v) ||
			    !varint(p, len, &at, &n) || !varint(p, len, &at, &v))
				return NAME_BAD;
			if (n > len)
				return NAME_BAD;
			for (i = 0; i < 2 * n + (type == 3 ? 3 : 0); i++)
				if (!varint(p, len, &at, &v))
					return NAME_BAD;
			break;
		case 0x06:	/* CRYPTO */
			if (!varint(p, len, &at, &v) || !varint(p, len, &at, &n) ||
			    n > len - at || v + n > ((uint64_t)1 << 62))
				return NAME_BAD;
			if (out->n_frames == QUIC_MAX_FRAMES)
				return NAME_BAD;
			out->frames[out->n_frames++] = (struct quic_frame){
				.offset = v, .len = (uint16_t)n,
				.pos = (uint16_t)(base + at),
			};
			at += (size_t)n;
			break;
		case 0x1c:	/* CONNECTION_CLOSE */
			if (!varint(p, len, &at, &v) || !varint(p, len, &at, &v) ||
			    !varint(p, len, &at, &n) || n > len - at)
				return NAME_BAD;
			at += (size_t)n;
			break;
		default:	/* not allowed in an Initial (RFC 9000 12.4) */
			return NAME_BAD;
		}
	}
	return NAME_DONE;
}

/* Decrypt the Initial at PKT[0, PLEN) whose packet number starts at PN:
 * NOT when its tag fails (not sealed with its DCID's keys). */
static enum name_result open_initial(struct quic_initial *out, uint8_t *pkt,
				     size_t pn, size_t plen, size_t *used)
{
	uint8_t key[16], iv[12], hp[16], mask[16], nonce[12];
	size_t pnl, i, ct;
	uint64_t num = 0;

	if (name_quic_keys(out->version, out->dcid, out->dcid_len, key, iv,
			   hp) < 0)
		return NAME_BAD;
	if (plen < pn + 4 + 16 || hp_mask(hp, pkt + pn + 4, mask) < 0)
		return NAME_BAD;
	pkt[0] ^= mask[0] & 0x0f;
	pnl = (size_t)(pkt[0] & 3) + 1;
	for (i = 0; i < pnl; i++) {
		pkt[pn + i] ^= mask[1 + i];
		num = num << 8 | pkt[pn + i];
	}
	if (plen < pn + pnl + 16)
		return NAME_BAD;
	memcpy(nonce, iv, 12);
	for (i = 0; i < 8; i++)
		nonce[11 - i] ^= (uint8_t)(num >> (8 * i));
	ct = plen - pn - pnl - 16;
	if (ct > sizeof(out->plain) - *used)
		return NAME_BAD;
	if (gcm_open(key, nonce, pkt, pn + pnl, pkt + pn + pnl, ct,
		     out->plain + *used) < 0)
		return NAME_NOT;	/* the tag fails: another key's */
	if (ct == 0)
		return NAME_BAD;	/* a packet has at least one frame */
	*used += ct;
	return frames(out, *used - ct, ct);
}

static bool is_initial(uint32_t version, uint8_t b)
{
	unsigned type = (b >> 4) & 3;

	return version == QUIC_V2 ? type == 1 : type == 0;
}

static bool is_retry(uint32_t version, uint8_t b)
{
	unsigned type = (b >> 4) & 3;

	return version == QUIC_V2 ? type == 0 : type == 3;
}

/* The version of the long-header packet at P (7 bytes or more). */
static uint32_t long_version(const uint8_t *p)
{
	return (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 8 | p[4];
}

static bool known_version(uint32_t version)
{
	return version == QUIC_V1 || version == QUIC_V2;
}

bool name_quic_foreign(const uint8_t *p, size_t len)
{
	return len >= 7 && (p[0] & 0x80) && !known_version(long_version(p));
}

/* One long-header packet of a datagram: what both walks read of it. */
struct long_hdr {
	uint32_t version;
	bool initial;
	uint8_t dcid_len;
	const uint8_t *dcid;
	size_t pn;		/* offset of its packet number */
	size_t end;		/* offset past it */
};

enum hdr_read {
	HDR_OK,
	HDR_SHORT,	/* fewer than 7 bytes left */
	HDR_OTHER,	/* another version than v1's and v2's, or a Retry */
	HDR_BAD,	/* a length overruns the datagram */
};

/* The long-header packet at P + AT (P: LEN bytes) into H. */
static enum hdr_read long_header(const uint8_t *p, size_t len, size_t at,
				 struct long_hdr *h)
{
	uint64_t tok, plen;
	uint8_t sl;

	if (len - at < 7)
		return HDR_SHORT;
	h->version = long_version(p + at);
	if (!known_version(h->version) || is_retry(h->version, p[at]))
		return HDR_OTHER;
	h->initial = is_initial(h->version, p[at]);
	h->dcid_len = p[at + 5];
	if (h->dcid_len > 20 || len - at - 6 < (size_t)h->dcid_len + 1)
		return HDR_BAD;
	h->dcid = p + at + 6;
	at += 6 + (size_t)h->dcid_len;
	sl = p[at++];
	if (sl > 20 || len - at < sl)
		return HDR_BAD;
	at += sl;
	if (h->initial) {
		if (!varint(p, len, &at, &tok) || tok > len - at)
			return HDR_BAD;
		at += (size_t)tok;
	}
	if (!varint(p, len, &at, &plen) || plen > len - at)
		return HDR_BAD;
	h->pn = at;
	h->end = at + (size_t)plen;
	return HDR_OK;
}

int name_quic_dcid(const uint8_t *p, size_t len, const uint8_t **dcid)
{
	struct long_hdr h;
	size_t at = 0;
	int n = -1;

	for (; at < len && (p[at] & 0x80); at = h.end) {
		if (long_header(p, len, at, &h) != HDR_OK)
			return -1;
		if (n < 0) {
			n = h.dcid_len;
			*dcid = h.dcid;
		} else if (n != h.dcid_len ||
			   memcmp(*dcid, h.dcid, h.dcid_len)) {
			return -1;
		}
	}
	return n;
}

/* Does Initial H carry another version or DCID than the Initials of
 * OUT's datagram opened before it (ANY: one did)? */
static bool other_initial(const struct quic_initial *out, bool any,
			  const struct long_hdr *h)
{
	return any && (h->version != out->version ||
		       h->dcid_len != out->dcid_len ||
		       memcmp(out->dcid, h->dcid, h->dcid_len));
}

enum name_result name_quic_initial(const uint8_t *p, size_t len,
				   struct quic_initial *out)
{
	uint8_t pkt[QUIC_MAX_DGRAM];
	size_t at = 0, used = 0;
	struct long_hdr h;
	bool any = false;

	out->n_frames = 0;
	out->dcid_len = 0;
	out->version = 0;
	out->n_opened = 0;
	out->n_sealed = 0;
	for (; at < len && (p[at] & 0x80); at = h.end) {
		enum hdr_read hr = long_header(p, len, at, &h);
		enum name_result r;

		if (hr == HDR_SHORT)
			break;
		if (hr == HDR_OTHER)
			return out->n_sealed ? NAME_BAD :
			       any ? NAME_DONE : NAME_NOT;
		if (hr == HDR_BAD || (h.initial && other_initial(out, any, &h)))
			return NAME_BAD;
		if (!h.initial)
			continue;	/* 0-RTT, Handshake: skip */
		out->version = h.version;
		out->dcid_len = h.dcid_len;
		memcpy(out->dcid, h.dcid, h.dcid_len);
		if (h.end - at > sizeof(pkt))
			return NAME_BAD;
		memcpy(pkt, p + at, h.end - at);
		r = open_initial(out, pkt, h.pn - at, h.end - at, &used);
		if (r == NAME_NOT) {
			/* Not sealed with this DCID's keys: the rest of the
			 * datagram is still walked, so that a caller knows
			 * whether any of its Initials opened. */
			out->n_sealed++;
			continue;
		}
		out->n_opened++;
		if (r != NAME_DONE)
			return r;
		any = true;
	}
	if (out->n_sealed || (!any && at < len && (p[at] & 0x80)))
		return NAME_BAD;
	return any ? NAME_DONE : NAME_NOT;
}
