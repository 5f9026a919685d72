/*
 * host/frame.c
 *		The stream's frames (see frame.h): encoding and strict decoding.
 */
#include <string.h>

#include "host/frame.h"

static void
put64(uint8_t *p, uint64_t v)
{
	int			i;

	for (i = 7; i >= 0; i--)
	{
		p[i] = (uint8_t) (v & 0xff);
		v >>= 8;
	}
}

static uint64_t
get64(const uint8_t *p)
{
	uint64_t	v = 0;
	int			i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t) (v >> 8);
	p[1] = (uint8_t) (v & 0xff);
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t) ((p[0] << 8) | p[1]);
}

bool
host_frame_decode_device(const uint8_t *buf, size_t len, host_frame *f)
{
	memset(f, 0, sizeof(*f));
	if (len < 1)
		return false;
	f->type = buf[0];
	switch (f->type)
	{
		case HOST_FRAME_RESUME:
			if (len != HOST_FRAME_RESUME_LEN)
				return false;
			f->stream = get64(buf + 1);
			f->offset = get64(buf + 9);
			return f->offset <= HOST_OFFSET_MAX;
		case HOST_FRAME_INPUT:
			if (len < 2 || len > HOST_FRAME_MAX)
				return false;
			f->data = buf + 1;
			f->len = len - 1;
			return true;
		case HOST_FRAME_RESIZE:
			if (len != HOST_FRAME_RESIZE_LEN)
				return false;
			f->rows = get16(buf + 1);
			f->cols = get16(buf + 3);
			return f->rows >= 1 && f->rows <= HOST_WINSIZE_MAX &&
				f->cols >= 1 && f->cols <= HOST_WINSIZE_MAX;
		default:
			return false;
	}
}

bool
host_frame_decode_host(const uint8_t *buf, size_t len, host_frame *f)
{
	memset(f, 0, sizeof(*f));
	if (len < 1)
		return false;
	f->type = buf[0];
	switch (f->type)
	{
		case HOST_FRAME_BEGIN:
			if (len != HOST_FRAME_BEGIN_LEN)
				return false;
			f->stream = get64(buf + 1);
			f->offset = get64(buf + 9);
			f->skipped = get64(buf + 17);
			return f->stream != 0 && f->offset <= HOST_OFFSET_MAX &&
				f->skipped <= f->offset;
		case HOST_FRAME_OUTPUT:
			if (len < 10 || len > HOST_FRAME_MAX)
				return false;
			f->offset = get64(buf + 1);
			f->data = buf + 9;
			f->len = len - 9;
			return f->offset <= HOST_OFFSET_MAX - f->len;
		default:
			return false;
	}
}

size_t
host_frame_put_begin(uint8_t out[HOST_FRAME_BEGIN_LEN], uint64_t stream, uint64_t offset,
					 uint64_t skipped)
{
	out[0] = HOST_FRAME_BEGIN;
	put64(out + 1, stream);
	put64(out + 9, offset);
	put64(out + 17, skipped);
	return HOST_FRAME_BEGIN_LEN;
}

size_t
host_frame_put_output(uint8_t out[9], uint64_t offset)
{
	out[0] = HOST_FRAME_OUTPUT;
	put64(out + 1, offset);
	return 9;
}

size_t
host_frame_put_resume(uint8_t out[HOST_FRAME_RESUME_LEN], uint64_t stream, uint64_t offset)
{
	out[0] = HOST_FRAME_RESUME;
	put64(out + 1, stream);
	put64(out + 9, offset);
	return HOST_FRAME_RESUME_LEN;
}

size_t
host_frame_put_resize(uint8_t out[HOST_FRAME_RESIZE_LEN], uint16_t rows, uint16_t cols)
{
	out[0] = HOST_FRAME_RESIZE;
	put16(out + 1, rows);
	put16(out + 3, cols);
	return HOST_FRAME_RESIZE_LEN;
}
