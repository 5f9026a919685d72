/*
 * fuzz_signal.c
 *		libFuzzer target of the signal codec.
 *
 * Properties checked on every input:
 *   - decoding never crashes, never reads past the input, and always fills
 *     the error with a log-safe member and a sentence that fits;
 *   - a payload that decodes OK encodes in at most 7958 bytes (BOTHY_SIGNAL_MAX_BYTES) to a text
 *     that decodes OK to the same signal, and re-encodes to the same bytes;
 *   - the input read as a signal struct either fails to encode or encodes
 *     to a payload that decodes OK to that signal (the encoder never
 *     writes what the decoder drops).
 *
 * clang -g -O1 -fsanitize=fuzzer,address,undefined -iquote src/common \
 *     test/fuzz/fuzz_signal.c src/common/(each .c) -o fuzz_signal
 * ./fuzz_signal -max_len=8192 test/fuzz/corpus
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "signal.h"
#include "../unit/signal_equal.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_error(bothy_decode_status status, const bothy_decode_error *err)
{
	static const size_t sizes[] = {1, 2, 17, 64, 200};
	char		text[200];
	size_t		len;
	size_t		i;

	if ((status == BOTHY_DECODE_MALFORMED) != (err->reason != BOTHY_REASON_NONE))
		abort();
	if (bothy_reason_code(err->reason) == NULL)
		abort();
	len = strnlen(err->member, sizeof(err->member));
	if (len >= sizeof(err->member))
		abort();
	for (i = 0; i < len; i++)
	{
		char		c = err->member[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
			abort();
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
	{
		memset(text, '#', sizeof(text));
		bothy_decode_error_describe(err, text, sizes[i]);
		if (strnlen(text, sizes[i]) >= sizes[i])
			abort();
	}
}

/* A decoded signal survives encoding, and its encoding is a fixed point. */
static void
check_round_trip(const bothy_signal *sig)
{
	char		first[BOTHY_SIGNAL_MAX_BYTES + 1];
	char		second[BOTHY_SIGNAL_MAX_BYTES + 1];
	bothy_signal back;
	bothy_decode_error err;
	int			n;

	n = bothy_signal_encode(sig, first, sizeof(first));
	if (n < 0 || n > BOTHY_SIGNAL_MAX_BYTES || (size_t) n != strlen(first))
		abort();
	if (bothy_signal_decode(first, (size_t) n, &back, &err) != BOTHY_DECODE_OK ||
		err.reason != BOTHY_REASON_NONE)
		abort();
	if (!bothy_test_signal_equal(sig, &back))
		abort();
	if (bothy_signal_encode(&back, second, sizeof(second)) != n ||
		memcmp(first, second, (size_t) n) != 0)
		abort();
}

/* Bytes of the input, then zeros once it runs out. */
typedef struct byte_source
{
	const uint8_t *data;
	size_t		size;
	size_t		pos;
} byte_source;

static uint8_t
next_byte(byte_source *src)
{
	return src->pos < src->size ? src->data[src->pos++] : 0;
}

static void
next_uuid(byte_source *src, bothy_uuid *u, bool make_v7)
{
	size_t		i;

	for (i = 0; i < sizeof(u->b); i++)
		u->b[i] = next_byte(src);
	if (make_v7)
	{
		u->b[6] = (uint8_t) (0x70 | (u->b[6] & 0x0f));
		u->b[8] = (uint8_t) (0x80 | (u->b[8] & 0x3f));
	}
}

/* Mostly in range, sometimes just past either end, sometimes anything. */
static int64_t
next_integer(byte_source *src, int64_t max)
{
	uint64_t	v = 0;
	int			i;

	switch (next_byte(src) % 4)
	{
		case 0:
			return -1;
		case 1:
			return max + (next_byte(src) % 2);
		case 2:
			for (i = 0; i < 8; i++)
				v = (v << 8) | next_byte(src);
			return (int64_t) v;
		default:
			return next_byte(src);
	}
}

static void
check_encoder(const uint8_t *data, size_t size)
{
	byte_source src = {data, size, 0};
	bothy_signal sig;
	bothy_signal back;
	char		buf[BOTHY_SIGNAL_MAX_BYTES + 1];
	bool		v7 = (next_byte(&src) & 1) == 0;
	int			n;

	memset(&sig, 0, sizeof(sig));
	sig.kind = (bothy_kind) (next_byte(&src) % (BOTHY_KIND_COUNT + 1));
	sig.optional = next_byte(&src) & 0x3fu;
	next_uuid(&src, &sig.node, v7);
	next_uuid(&src, &sig.thread, false);
	next_uuid(&src, &sig.principal, false);
	next_uuid(&src, &sig.run, false);
	next_uuid(&src, &sig.agent, false);
	next_uuid(&src, &sig.actor, false);
	next_uuid(&src, &sig.device, false);
	next_uuid(&src, &sig.gateway_session, false);
	next_uuid(&src, &sig.bind_id, v7);
	next_uuid(&src, &sig.recipient, false);
	next_uuid(&src, &sig.nid, false);
	next_uuid(&src, &sig.message, false);
	next_uuid(&src, &sig.target, false);
	next_uuid(&src, &sig.host_id, false);
	next_uuid(&src, &sig.session_id, false);
	next_uuid(&src, &sig.conn_id, v7);
	sig.version = next_integer(&src, BOTHY_SIGNAL_VERSION_MAX);
	sig.count = next_integer(&src, BOTHY_SIGNAL_COUNT_MAX);
	sig.event = next_integer(&src, BOTHY_SIGNAL_VERSION_MAX);
	sig.seq = next_integer(&src, BOTHY_SIGNAL_VERSION_MAX);
	sig.state = (bothy_agent_state) (next_byte(&src) % (BOTHY_AGENT_STATE_COUNT + 1));
	sig.billing_mode = (bothy_billing_mode) (next_byte(&src) % (BOTHY_BILLING_MODE_COUNT + 1));
	sig.hint_kind = (bothy_hint_kind) (next_byte(&src) % (BOTHY_HINT_KIND_COUNT + 1));
	sig.quiet = (next_byte(&src) & 1) != 0;

	n = bothy_signal_encode(&sig, buf, sizeof(buf));
	if (n < 0)
		return;
	if (n > BOTHY_SIGNAL_MAX_BYTES ||
		bothy_signal_decode(buf, (size_t) n, &back, NULL) != BOTHY_DECODE_OK ||
		!bothy_test_signal_equal(&sig, &back))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bothy_signal sig;
	bothy_decode_error err;
	bothy_decode_status status;

	status = bothy_signal_decode((const char *) data, size, &sig, &err);
	check_error(status, &err);
	if (status == BOTHY_DECODE_OK)
		check_round_trip(&sig);
	check_encoder(data, size);
	return 0;
}
