/*
 * json_scan.c
 *		Strict JSON validation and object member reading (see json_scan.h).
 *
 * Recursion is bounded by BOTHY_JSON_MAX_DEPTH, so the stack use is small
 * and fixed whatever the input; a backend and the daemon can both afford it.
 */
#include "json_scan.h"

#include <stdint.h>
#include <string.h>

typedef struct bothy_json_scanner
{
	const unsigned char *p;
	size_t		len;
	size_t		pos;
} bothy_json_scanner;

static bool bothy_json_scan_value(bothy_json_scanner *s, int depth,
								  bothy_json_type *type);

static bool
bothy_json_at_end(const bothy_json_scanner *s)
{
	return s->pos >= s->len;
}

static bool
bothy_json_peek_is(const bothy_json_scanner *s, unsigned char c)
{
	return s->pos < s->len && s->p[s->pos] == c;
}

static void
bothy_json_skip_ws(bothy_json_scanner *s)
{
	while (s->pos < s->len)
	{
		unsigned char c = s->p[s->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return;
		s->pos++;
	}
}

/* Four hex digits of a \u escape (either case, as RFC 8259 allows). */
static bool
bothy_json_hex4(const unsigned char *p, size_t avail, unsigned *cp)
{
	unsigned	v = 0;
	size_t		i;

	if (avail < 4)
		return false;
	for (i = 0; i < 4; i++)
	{
		unsigned char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned) (c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned) (c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned) (c - 'A' + 10);
		else
			return false;
	}
	*cp = v;
	return true;
}

static bool
bothy_json_is_high_surrogate(unsigned cp)
{
	return cp >= 0xd800 && cp <= 0xdbff;
}

static bool
bothy_json_is_low_surrogate(unsigned cp)
{
	return cp >= 0xdc00 && cp <= 0xdfff;
}

/*
 * The code point of the \uXXXX (or surrogate pair) at p, which starts just
 * after the first backslash-u; *used is the number of bytes it took.  A
 * lone surrogate is refused: it names no character and has no UTF-8 form.
 */
static bool
bothy_json_unicode_escape(const unsigned char *p, size_t avail,
						  unsigned *cp, size_t *used)
{
	unsigned	hi;
	unsigned	lo;

	if (!bothy_json_hex4(p, avail, &hi) || bothy_json_is_low_surrogate(hi))
		return false;
	if (!bothy_json_is_high_surrogate(hi))
	{
		*cp = hi;
		*used = 4;
		return true;
	}
	if (avail < 6 || p[4] != '\\' || p[5] != 'u' ||
		!bothy_json_hex4(p + 6, avail - 6, &lo) ||
		!bothy_json_is_low_surrogate(lo))
		return false;
	*cp = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
	*used = 10;
	return true;
}

/* At the byte after a backslash. */
static bool
bothy_json_scan_escape(bothy_json_scanner *s)
{
	unsigned	cp;
	size_t		used;

	if (bothy_json_at_end(s))
		return false;
	switch (s->p[s->pos++])
	{
		case '"':
		case '\\':
		case '/':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
			return true;
		case 'u':
			if (!bothy_json_unicode_escape(s->p + s->pos, s->len - s->pos,
										   &cp, &used))
				return false;
			s->pos += used;
			return true;
		default:
			return false;
	}
}

/*
 * One UTF-8 sequence whose lead byte (>= 0x80) is at pos, checked against
 * Table 3-7 of the Unicode standard: no overlong forms, no surrogates,
 * nothing above U+10FFFF.
 */
static bool
bothy_json_scan_utf8(bothy_json_scanner *s)
{
	unsigned char c = s->p[s->pos];
	unsigned char lo = 0x80;
	unsigned char hi = 0xbf;
	size_t		n;
	size_t		i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 1;
	else if (c >= 0xe0 && c <= 0xef)
	{
		n = 2;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	}
	else if (c >= 0xf0 && c <= 0xf4)
	{
		n = 3;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	}
	else
		return false;

	if (s->len - s->pos - 1 < n)
		return false;
	if (s->p[s->pos + 1] < lo || s->p[s->pos + 1] > hi)
		return false;
	for (i = 2; i <= n; i++)
		if ((s->p[s->pos + i] & 0xc0) != 0x80)
			return false;
	s->pos += n + 1;
	return true;
}

/*
 * Whether any of the 8 bytes at p needs a closer look: a control
 * character, a byte of 0x80 or above, a quote or a backslash.  Each test is
 * the usual "some byte is below n" word trick, exact for "some byte"; the
 * high bit of x^c is that of x, so one & ~x serves all three.
 */
static bool
bothy_json_any_special8(const unsigned char *p)
{
	const uint64_t ones = UINT64_C(0x0101010101010101);
	const uint64_t highs = UINT64_C(0x8080808080808080);
	uint64_t	x;

	memcpy(&x, p, sizeof(x));
	return ((((x - ones * 0x20) | ((x ^ (ones * '"')) - ones) | ((x ^ (ones * '\\')) - ones)) & ~x) |
			x) & highs;
}

/*
 * At the opening quote; ends after the closing one.  The inner loops run
 * over the bytes a string holds as they are (printable ASCII but the quote
 * and the backslash), which is nearly every byte of a signal: eight at a
 * time, then one at a time up to the byte that needs a look.
 */
static bool
bothy_json_scan_string(bothy_json_scanner *s)
{
	const unsigned char *p = s->p;
	size_t		len = s->len;

	s->pos++;
	for (;;)
	{
		size_t		pos = s->pos;
		unsigned char c;

		while (len - pos >= 8 && !bothy_json_any_special8(p + pos))
			pos += 8;
		while (pos < len && p[pos] >= 0x20 && p[pos] < 0x80 &&
			   p[pos] != '"' && p[pos] != '\\')
			pos++;
		s->pos = pos;
		if (pos >= len)
			return false;
		c = p[pos];
		if (c == '"')
		{
			s->pos++;
			return true;
		}
		if (c == '\\')
		{
			s->pos++;
			if (!bothy_json_scan_escape(s))
				return false;
		}
		else if (c < 0x20)
			return false;		/* control characters, NUL among them */
		else if (!bothy_json_scan_utf8(s))
			return false;
	}
}

static bool
bothy_json_scan_digits(bothy_json_scanner *s)
{
	size_t		start = s->pos;

	while (s->pos < s->len && s->p[s->pos] >= '0' && s->p[s->pos] <= '9')
		s->pos++;
	return s->pos > start;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool
bothy_json_scan_number(bothy_json_scanner *s)
{
	if (bothy_json_peek_is(s, '-'))
		s->pos++;
	if (bothy_json_peek_is(s, '0'))
		s->pos++;
	else if (!bothy_json_scan_digits(s))
		return false;
	if (bothy_json_peek_is(s, '.'))
	{
		s->pos++;
		if (!bothy_json_scan_digits(s))
			return false;
	}
	if (bothy_json_peek_is(s, 'e') || bothy_json_peek_is(s, 'E'))
	{
		s->pos++;
		if (bothy_json_peek_is(s, '+') || bothy_json_peek_is(s, '-'))
			s->pos++;
		if (!bothy_json_scan_digits(s))
			return false;
	}
	return true;
}

static bool
bothy_json_scan_literal(bothy_json_scanner *s, const char *lit)
{
	size_t		n = strlen(lit);

	if (s->len - s->pos < n || memcmp(s->p + s->pos, lit, n) != 0)
		return false;
	s->pos += n;
	return true;
}

/*
 * A member name and its colon, with the whitespace around; *name_end is
 * the position of the name's closing quote.
 */
static bool
bothy_json_scan_name(bothy_json_scanner *s, size_t *name_end)
{
	if (!bothy_json_peek_is(s, '"') || !bothy_json_scan_string(s))
		return false;
	*name_end = s->pos - 1;
	bothy_json_skip_ws(s);
	if (!bothy_json_peek_is(s, ':'))
		return false;
	s->pos++;
	bothy_json_skip_ws(s);
	return true;
}

/* At '{' or '['; depth is the container's own level. */
static bool
bothy_json_scan_container(bothy_json_scanner *s, int depth, bool object)
{
	unsigned char close = object ? '}' : ']';
	bothy_json_type type;
	size_t		name_end;

	s->pos++;
	bothy_json_skip_ws(s);
	if (bothy_json_peek_is(s, close))
	{
		s->pos++;
		return true;
	}
	for (;;)
	{
		if (object && !bothy_json_scan_name(s, &name_end))
			return false;
		if (!bothy_json_scan_value(s, depth, &type))
			return false;
		bothy_json_skip_ws(s);
		if (bothy_json_peek_is(s, close))
		{
			s->pos++;
			return true;
		}
		if (!bothy_json_peek_is(s, ','))
			return false;
		s->pos++;
		bothy_json_skip_ws(s);
	}
}

/* depth: how many arrays and objects enclose the value. */
static bool
bothy_json_scan_value(bothy_json_scanner *s, int depth, bothy_json_type *type)
{
	if (bothy_json_at_end(s))
		return false;
	switch (s->p[s->pos])
	{
		case '{':
			*type = BOTHY_JSON_OBJECT;
			return depth < BOTHY_JSON_MAX_DEPTH &&
				bothy_json_scan_container(s, depth + 1, true);
		case '[':
			*type = BOTHY_JSON_ARRAY;
			return depth < BOTHY_JSON_MAX_DEPTH &&
				bothy_json_scan_container(s, depth + 1, false);
		case '"':
			*type = BOTHY_JSON_STRING;
			return bothy_json_scan_string(s);
		case 't':
			*type = BOTHY_JSON_TRUE;
			return bothy_json_scan_literal(s, "true");
		case 'f':
			*type = BOTHY_JSON_FALSE;
			return bothy_json_scan_literal(s, "false");
		case 'n':
			*type = BOTHY_JSON_NULL;
			return bothy_json_scan_literal(s, "null");
		case '-':
		case '0':
		case '1':
		case '2':
		case '3':
		case '4':
		case '5':
		case '6':
		case '7':
		case '8':
		case '9':
			*type = BOTHY_JSON_NUMBER;
			return bothy_json_scan_number(s);
		default:
			return false;
	}
}

bothy_json_type
bothy_json_validate(const char *buf, size_t len)
{
	bothy_json_scanner s;
	bothy_json_type type = BOTHY_JSON_INVALID;

	if (buf == NULL)
		return BOTHY_JSON_INVALID;
	s.p = (const unsigned char *) buf;
	s.len = len;
	s.pos = 0;
	bothy_json_skip_ws(&s);
	if (!bothy_json_scan_value(&s, 0, &type))
		return BOTHY_JSON_INVALID;
	bothy_json_skip_ws(&s);
	return bothy_json_at_end(&s) ? type : BOTHY_JSON_INVALID;
}

void
bothy_json_reader_init(bothy_json_reader *r, const char *buf, size_t len)
{
	bothy_json_scanner s;

	s.p = (const unsigned char *) buf;
	s.len = len;
	s.pos = 0;
	bothy_json_skip_ws(&s);
	if (bothy_json_peek_is(&s, '{'))
		s.pos++;
	else
		s.pos = len;			/* not an object: no members */
	r->buf = buf;
	r->len = len;
	r->pos = s.pos;
}

/*
 * The buffer was validated, so the failures below cannot happen; they end
 * the members rather than trust that.
 */
bool
bothy_json_reader_next(bothy_json_reader *r, bothy_json_member *m)
{
	bothy_json_scanner s;
	size_t		name_start;
	size_t		name_end;
	size_t		value_start;

	s.p = (const unsigned char *) r->buf;
	s.len = r->len;
	s.pos = r->pos;
	bothy_json_skip_ws(&s);
	if (bothy_json_peek_is(&s, ','))
	{
		s.pos++;
		bothy_json_skip_ws(&s);
	}
	name_start = s.pos + 1;
	if (!bothy_json_scan_name(&s, &name_end))
		return false;
	m->name = r->buf + name_start;
	m->name_len = name_end - name_start;
	value_start = s.pos;
	if (!bothy_json_scan_value(&s, 1, &m->type))
		return false;
	if (m->type == BOTHY_JSON_STRING)
	{
		m->value = r->buf + value_start + 1;
		m->value_len = s.pos - value_start - 2;
	}
	else
	{
		m->value = r->buf + value_start;
		m->value_len = s.pos - value_start;
	}
	r->pos = s.pos;
	return true;
}

static size_t
bothy_json_utf8_encode(unsigned cp, unsigned char out[4])
{
	if (cp < 0x80)
	{
		out[0] = (unsigned char) cp;
		return 1;
	}
	if (cp < 0x800)
	{
		out[0] = (unsigned char) (0xc0 | (cp >> 6));
		out[1] = (unsigned char) (0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000)
	{
		out[0] = (unsigned char) (0xe0 | (cp >> 12));
		out[1] = (unsigned char) (0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char) (0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (unsigned char) (0xf0 | (cp >> 18));
	out[1] = (unsigned char) (0x80 | ((cp >> 12) & 0x3f));
	out[2] = (unsigned char) (0x80 | ((cp >> 6) & 0x3f));
	out[3] = (unsigned char) (0x80 | (cp & 0x3f));
	return 4;
}

/*
 * The bytes of the escape after the backslash at raw[*i], or 0 for a
 * broken escape (only possible on unvalidated input); advances *i.
 */
static size_t
bothy_json_decode_escape(const unsigned char *raw, size_t raw_len, size_t *i,
						 unsigned char out[4])
{
	size_t		at = *i + 1;
	unsigned	cp;
	size_t		used;

	if (at >= raw_len)
		return 0;
	*i = at + 1;
	switch (raw[at])
	{
		case '"':
		case '\\':
		case '/':
			out[0] = raw[at];
			return 1;
		case 'b':
			out[0] = '\b';
			return 1;
		case 'f':
			out[0] = '\f';
			return 1;
		case 'n':
			out[0] = '\n';
			return 1;
		case 'r':
			out[0] = '\r';
			return 1;
		case 't':
			out[0] = '\t';
			return 1;
		case 'u':
			if (!bothy_json_unicode_escape(raw + at + 1, raw_len - at - 1,
										   &cp, &used))
				return 0;
			*i = at + 1 + used;
			return bothy_json_utf8_encode(cp, out);
		default:
			return 0;
	}
}

size_t
bothy_json_unescape(const char *raw, size_t raw_len, char *out, size_t cap,
					bool *truncated)
{
	const unsigned char *p = (const unsigned char *) raw;
	size_t		i = 0;
	size_t		n = 0;

	/* Nearly every string has no escape: then it is one copy. */
	if (memchr(raw, '\\', raw_len) == NULL)
	{
		n = raw_len < cap ? raw_len : cap;
		memcpy(out, raw, n);
		*truncated = raw_len > cap;
		return n;
	}
	*truncated = false;
	while (i < raw_len)
	{
		unsigned char bytes[4];
		size_t		k;

		if (p[i] != '\\')
		{
			bytes[0] = p[i++];
			k = 1;
		}
		else
		{
			k = bothy_json_decode_escape(p, raw_len, &i, bytes);
			if (k == 0)
				break;
		}
		if (k > cap - n)
		{
			*truncated = true;
			break;
		}
		memcpy(out + n, bytes, k);
		n += k;
	}
	return n;
}
