/*
 * signal_decode.c
 *		The signal codec's cost per payload, side by side in one run: this
 *		tree's decoder, jansson parsing the same bytes (what a node would
 *		pay with a general JSON library), the whole of what a node runs per
 *		payload it hears (the envelope's MAC checked with the channel key,
 *		core/channel.c, then the decoder), and optionally the decoder of an
 *		older revision (bench/signal_decode REV links it in with its symbols
 *		renamed old_*).  Each round times every contender on every payload,
 *		in turn; the figure is the median round.
 *
 * Built and run by bench/signal_decode.
 */
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/channel.h"
#include "signal.h"

#ifdef BOTHY_OLD_DECODER
bothy_decode_status old_bothy_signal_decode(const char *buf, size_t len, bothy_signal *out,
											bothy_decode_error *err);
#endif

#define ROUNDS 15
#define CALLS 200000

static const char *const payloads[][2] = {
	{"gateway.typing", "{\"kind\":\"gateway.typing\",\"node\":\"01890a5d-ac96-774b-bcce-b302099a8057\","
	 "\"thread\":\"11111111-1111-4111-8111-111111111111\",\"principal\":\"22222222-2222-4222-8222-000000001234\"}"},
	{"gateway.run", "{\"kind\":\"gateway.run\",\"node\":\"01890a5d-ac96-774b-bcce-b302099a8057\","
	 "\"run\":\"c0ffee00-1234-4abc-9def-0123456789ab\",\"thread\":\"11111111-1111-4111-8111-111111111111\",\"version\":42}"},
	{"gateway.hint", "{\"kind\":\"gateway.hint\",\"node\":\"01890a5d-ac96-774b-bcce-b302099a8057\","
	 "\"recipient\":\"3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b\",\"nid\":\"5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d\","
	 "\"hint_kind\":\"mention\",\"quiet\":false,\"count\":3,\"thread\":\"11111111-1111-4111-8111-111111111111\"}"},
};
#define NPAYLOADS (sizeof(payloads) / sizeof(payloads[0]))

enum contender
{
	THIS_TREE,
	JANSSON,
	SIGNED,
#ifdef BOTHY_OLD_DECODER
	OLD_TREE,
#endif
	CONTENDERS
};

static const char *const contender_names[] = {"this tree", "jansson json_loadb",
	"the envelope's check and this tree",
#ifdef BOTHY_OLD_DECODER
	"the older revision",
#endif
};

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint8_t key[BOTHY_ENVELOPE_KEY_BYTES];
static gw_channel_key prepared;
static char sealed[NPAYLOADS][BOTHY_CHANNEL_MAX_BYTES + 1];	/* each payload signed */

/* payloads[p] in its envelope under key, as the extension signs it. */
static void
seal(size_t p)
{
	uint8_t		mac[crypto_auth_hmacsha256_BYTES];
	const char *payload = payloads[p][1];

	crypto_auth_hmacsha256(mac, (const unsigned char *) payload, strlen(payload), key);
	if (bothy_envelope_wrap(mac, payload, strlen(payload), sealed[p], sizeof(sealed[p])) == 0)
		exit(1);
}

/* Nanoseconds per call of one contender on one payload; exits on a wrong answer. */
static double
time_calls(enum contender c, size_t p)
{
	const char *payload = payloads[p][1];
	size_t		len = strlen(payload);
	bothy_signal sig;
	char		opened[BOTHY_CHANNEL_MAX_BYTES + 1];
	size_t		openlen;
	double		start = now_ns();

	for (int i = 0; i < CALLS; i++)
	{
		bool		ok;

		switch (c)
		{
			case THIS_TREE:
				ok = bothy_signal_decode(payload, len, &sig, NULL) == BOTHY_DECODE_OK;
				break;
			case SIGNED:
				ok = gw_channel_open(&prepared, sealed[p], strlen(sealed[p]), opened, sizeof(opened),
									 &openlen) == GW_CHANNEL_SIGNED &&
					bothy_signal_decode(opened, openlen, &sig, NULL) == BOTHY_DECODE_OK;
				break;
			case JANSSON:
				{
					json_t	   *j = json_loadb(payload, len, JSON_REJECT_DUPLICATES, NULL);

					ok = j != NULL;
					json_decref(j);
				}
				break;
#ifdef BOTHY_OLD_DECODER
			case OLD_TREE:
				ok = old_bothy_signal_decode(payload, len, &sig, NULL) == BOTHY_DECODE_OK;
				break;
#endif
			default:
				ok = false;
		}
		if (!ok)
		{
			fprintf(stderr, "signal_decode: %s refused a valid payload\n", contender_names[c]);
			exit(1);
		}
	}
	return (now_ns() - start) / CALLS;
}

static int
compare_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

int
main(void)
{
	static double ns[NPAYLOADS][CONTENDERS][ROUNDS];

	if (sodium_init() < 0)
		return 1;
	randombytes_buf(key, sizeof(key));
	gw_channel_prepare(key, &prepared);
	for (size_t p = 0; p < NPAYLOADS; p++)
		seal(p);
	for (int r = 0; r < ROUNDS; r++)
		for (size_t p = 0; p < NPAYLOADS; p++)
			for (int c = 0; c < CONTENDERS; c++)
				ns[p][c][r] = time_calls((enum contender) c, p);

	printf("signal decoding, ns per payload (median of %d rounds of %d calls each):\n", ROUNDS, CALLS);
	for (size_t p = 0; p < NPAYLOADS; p++)
	{
		double		median[CONTENDERS];

		for (int c = 0; c < CONTENDERS; c++)
		{
			qsort(ns[p][c], ROUNDS, sizeof(double), compare_double);
			median[c] = ns[p][c][ROUNDS / 2];
		}
		printf("  %-15s %3zu bytes   this tree %6.0f   jansson %6.0f (%.1fx this tree)"
			   "   signed: check + decode %6.0f (%.2fx this tree)",
			   payloads[p][0], strlen(payloads[p][1]), median[THIS_TREE], median[JANSSON],
			   median[JANSSON] / median[THIS_TREE], median[SIGNED], median[SIGNED] / median[THIS_TREE]);
#ifdef BOTHY_OLD_DECODER
		printf("   older revision %6.0f (%.2fx this tree)", median[OLD_TREE], median[OLD_TREE] / median[THIS_TREE]);
#endif
		printf("\n");
	}
	return 0;
}
