/*
 * test_frame.c
 *		Unit tests of src/host/frame.c: every frame byte for byte as
 *		docs/host.md lays it out, and the strict decoder's refusals.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "host/frame.h"
#include "unit.h"

/* The decoder of one side refuses buf, read from an exact heap copy. */
static bool
refuses(bool from_device, const void *buf, size_t len)
{
	host_frame	f;
	char	   *copy = unit_exact_copy(buf, len);
	bool		refused = from_device ?
		!host_frame_decode_device((const uint8_t *) copy, len, &f) :
		!host_frame_decode_host((const uint8_t *) copy, len, &f);

	free(copy);
	return refused;
}

#define device_refuses(...) refuses(true, __VA_ARGS__)
#define host_refuses(...) refuses(false, __VA_ARGS__)

int
main(void)
{
	uint8_t		buf[HOST_FRAME_MAX + 2];
	host_frame	f;
	static const uint8_t begin[] = {'b', 1, 2, 3, 4, 5, 6, 7, 8,
		0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0x0f, 0xff};
	static const uint8_t resume[] = {'r', 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
		0, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t resize[] = {'w', 0, 50, 0, 132};
	static const uint8_t hello_input[] = {'i', 'l', 's', '\r'};
	size_t		n;

	unit_diag("the stream's frames (src/host/frame.c)");

	/* the layouts */
	n = host_frame_put_begin(buf, UINT64_C(0x0102030405060708), 0x100000, 0xfff);
	UNIT_OK(n == 25 && memcmp(buf, begin, 25) == 0,
			"begin: 'b', stream, offset, skipped, 8 bytes each, big-endian");
	n = host_frame_put_output(buf, UINT64_C(0x0a0b0c0d0e0f1011));
	UNIT_OK(n == 9 && buf[0] == 'o' && buf[1] == 0x0a && buf[8] == 0x11,
			"output: 'o' and the offset of its first byte, big-endian");
	n = host_frame_put_resume(buf, UINT64_C(0x123456789abcdef0), HOST_OFFSET_MAX);
	UNIT_OK(n == 17 && memcmp(buf, resume, 17) == 0, "resume: 'r', stream, offset");
	n = host_frame_put_resize(buf, 50, 132);
	UNIT_OK(n == 5 && memcmp(buf, resize, 5) == 0, "resize: 'w', rows, cols, 2 bytes each");

	/* the device's frames decoded */
	UNIT_OK(host_frame_decode_device(resume, sizeof(resume), &f) && f.type == 'r' &&
			f.stream == UINT64_C(0x123456789abcdef0) && f.offset == HOST_OFFSET_MAX,
			"resume decodes, the largest offset included");
	UNIT_OK(host_frame_decode_device(resize, sizeof(resize), &f) && f.type == 'w' &&
			f.rows == 50 && f.cols == 132, "resize decodes");
	UNIT_OK(host_frame_decode_device(hello_input, sizeof(hello_input), &f) && f.type == 'i' &&
			f.len == 3 && memcmp(f.data, "ls\r", 3) == 0, "input decodes to its bytes");
	memset(buf, 'x', sizeof(buf));
	buf[0] = 'i';
	UNIT_OK(host_frame_decode_device(buf, HOST_FRAME_MAX, &f) &&
			f.len == HOST_FRAME_INPUT_MAX && HOST_FRAME_MAX == 16384,
			"input of the most bytes decodes: 16384 bytes whole");

	/* the device's refusals */
	UNIT_OK(device_refuses("", 0), "an empty message is refused");
	UNIT_OK(device_refuses("i", 1), "input without a byte is refused");
	UNIT_OK(device_refuses(buf, HOST_FRAME_MAX + 1), "input over the most is refused");
	buf[0] = 'r';
	memset(buf + 1, 0, 17);
	UNIT_OK(device_refuses(resume, 16) && device_refuses(buf, 18),
			"resume of any other length is refused");
	buf[9] = 0x00;
	buf[10] = 0x20;				/* offset 2^53 */
	UNIT_OK(device_refuses(buf, 17), "a resume offset of 2^53 is refused");
	UNIT_OK(device_refuses(resize, 4) && device_refuses((uint8_t[]) {'w', 0, 1, 0, 1, 0}, 6),
			"resize of any other length is refused");
	UNIT_OK(device_refuses((uint8_t[]) {'w', 0, 0, 0, 80}, 5) &&
			device_refuses((uint8_t[]) {'w', 0, 24, 0, 0}, 5), "zero rows or columns are refused");
	UNIT_OK(!device_refuses((uint8_t[]) {'w', 0x10, 0x00, 0x10, 0x00}, 5) &&
			device_refuses((uint8_t[]) {'w', 0x10, 0x01, 0, 80}, 5) &&
			device_refuses((uint8_t[]) {'w', 0, 24, 0x10, 0x01}, 5),
			"4096 rows and columns pass, 4097 is refused");
	UNIT_OK(device_refuses(begin, sizeof(begin)), "a host's frame from a device is refused");
	UNIT_OK(device_refuses("x", 1) && device_refuses("I\0", 2) && device_refuses("\0", 1),
			"unknown types are refused (the letters are lower case)");

	/* the host's frames, as a device decodes them */
	UNIT_OK(host_frame_decode_host(begin, sizeof(begin), &f) && f.type == 'b' &&
			f.stream == UINT64_C(0x0102030405060708) && f.offset == 0x100000 &&
			f.skipped == 0xfff, "begin decodes");
	memcpy(buf, begin, sizeof(begin));
	memset(buf + 1, 0, 8);
	UNIT_OK(host_refuses(buf, 25), "begin with stream 0 is refused");
	host_frame_put_begin(buf, 7, 10, 11);
	UNIT_OK(host_refuses(buf, 25), "begin that skipped more than its offset is refused");
	host_frame_put_output(buf, 42);
	memcpy(buf + 9, "hello", 5);
	UNIT_OK(host_frame_decode_host(buf, 14, &f) && f.type == 'o' && f.offset == 42 &&
			f.len == 5 && memcmp(f.data, "hello", 5) == 0, "output decodes");
	UNIT_OK(host_refuses(buf, 9), "output without a byte is refused");
	UNIT_OK(host_refuses(buf, HOST_FRAME_MAX + 1), "output over the most is refused");
	host_frame_put_output(buf, HOST_OFFSET_MAX - 4);
	UNIT_OK(host_refuses(buf, 14) && !host_refuses(buf, 13),
			"output reaching past 2^53 - 1 is refused");
	return unit_done();
}
