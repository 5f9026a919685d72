/*
 * host/frame.h
 *		The stream's frames: what the binary WebSocket messages of a data
 *		connection carry after "paired" (docs/host.md, "The stream's
 *		frames").  The relay passes them untouched; only the host service
 *		and the device read them.
 *
 * Each message is one frame: a type byte, then fixed big-endian fields,
 * then (output and input only) the bytes.  Decoding is strict: an unknown
 * type, a length other than the type's, a field out of its range is
 * refused, never guessed at.  Pure code (no I/O) for the unit tests.
 */
#ifndef BOTHY_HOST_FRAME_H
#define BOTHY_HOST_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* host -> device */
#define HOST_FRAME_BEGIN	'b'		/* stream 8, offset 8, skipped 8 */
#define HOST_FRAME_OUTPUT	'o'		/* offset 8, then 1 .. HOST_FRAME_OUTPUT_MAX bytes */
/* device -> host */
#define HOST_FRAME_RESUME	'r'		/* stream 8, offset 8 */
#define HOST_FRAME_INPUT	'i'		/* 1 .. HOST_FRAME_INPUT_MAX bytes */
#define HOST_FRAME_RESIZE	'w'		/* rows 2, cols 2 */

/*
 * One frame, whole, of either direction: the nodes' default --max-message
 * (docs/gateway.md).  The relay passes a binary message only up to its
 * --max-message and closes the sender with 1009 beyond it, so a longer
 * frame would cut the data connection in the middle of a session.
 */
#define HOST_FRAME_MAX 16384
/* The bytes an output frame carries at most (after its type and offset). */
#define HOST_FRAME_OUTPUT_MAX (HOST_FRAME_MAX - 1 - 8)
/* The bytes an input frame carries at most (after its type). */
#define HOST_FRAME_INPUT_MAX (HOST_FRAME_MAX - 1)
#define HOST_FRAME_BEGIN_LEN 25
#define HOST_FRAME_RESUME_LEN 17
#define HOST_FRAME_RESIZE_LEN 5
/* Offsets stay below 2^53, so a device in JavaScript holds them exactly. */
#define HOST_OFFSET_MAX ((UINT64_C(1) << 53) - 1)
/* Rows and columns of a resize, each. */
#define HOST_WINSIZE_MAX 4096

typedef struct host_frame
{
	uint8_t		type;			/* one of the HOST_FRAME_ letters */
	uint64_t	stream;			/* begin, resume: the shell's stream ID (0: none yet) */
	uint64_t	offset;			/* begin, output, resume */
	uint64_t	skipped;		/* begin */
	uint16_t	rows;			/* resize */
	uint16_t	cols;			/* resize */
	const uint8_t *data;		/* output, input: into the decoded buffer */
	size_t		len;			/* output, input */
} host_frame;

/*
 * Decodes one frame a device sent (resume, input, resize); false when it
 * is not exactly one of them.
 */
bool		host_frame_decode_device(const uint8_t *buf, size_t len, host_frame *f);

/* Decodes one frame a host sent (begin, output), for tests and tools. */
bool		host_frame_decode_host(const uint8_t *buf, size_t len, host_frame *f);

/*
 * Header writers: each writes the type byte and the fixed fields into out
 * and returns their length; an output frame's bytes follow the header.
 */
size_t		host_frame_put_begin(uint8_t out[HOST_FRAME_BEGIN_LEN], uint64_t stream,
								 uint64_t offset, uint64_t skipped);
size_t		host_frame_put_output(uint8_t out[9], uint64_t offset);

/* The device's frames, for tests and tools. */
size_t		host_frame_put_resume(uint8_t out[HOST_FRAME_RESUME_LEN], uint64_t stream,
								  uint64_t offset);
size_t		host_frame_put_resize(uint8_t out[HOST_FRAME_RESIZE_LEN], uint16_t rows,
								  uint16_t cols);

#endif							/* BOTHY_HOST_FRAME_H */
