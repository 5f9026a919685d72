# src/host/host.mk: bothy-host, the reference host service of the terminal
# relay (docs/host.md), and the unit tests of its pure parts.  Included by
# the top Makefile after PGXS and gateway.mk, so every variable here has a
# HOST_ name and every rule is explicit, as in gateway.mk.
#
#   make host    src/host/bothy-host and $(HOST_UNIT_TESTS)
#
# A host service builds from src/common and itself, never from a file of
# the gateway (docs/development.md, "Layout"; test/host/test_common_ground.py
# keeps it so): its own includes name their room ("host/ring.h"), found
# through -iquote src; src/common's headers are found by their bare name.
# From src/common it links the one-record-a-line logger (logline.c), the
# strict base64url of the key file and signatures (base64url.c), the strict
# integer of the options (intparse.c) and UUIDs (uuid.c).  Only the flags
# of libwebsockets and jansson come from gateway.mk (pkg-config's, found
# once for both daemons).

HOST_CC      ?= cc
HOST_SRCS     = $(wildcard src/host/*.c)
HOST_HDRS     = $(wildcard src/host/*.h)
HOST_SHARED   = src/common/logline.c src/common/base64url.c src/common/intparse.c \
                src/common/uuid.c
HOST_SHARED_HDRS = src/common/logline.h src/common/base64url.h src/common/intparse.h \
                src/common/uuid.h
HOST_BIN      = src/host/bothy-host
HOST_INCLUDES = -iquote src/common -iquote src
# BOTHY_HOST_VERSION: --version and hello's version, bothy.control's
# default_version (the top Makefile's EXTVERSION), as for the gateway
HOST_CFLAGS   = -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wmissing-prototypes \
                -Wimplicit-fallthrough=3 $(HOST_INCLUDES) $(GATEWAY_LWS_CFLAGS) \
                -DBOTHY_HOST_VERSION='"$(EXTVERSION)"'
HOST_LIBS     = $(GATEWAY_LWS_LIBS) -lsodium -lutil

# The pure parts, with the sanitizers of the gateway's unit tests.
HOST_UNIT_CFLAGS = -std=gnu11 -Wall -Wextra -Werror -Wmissing-prototypes \
                -Wimplicit-fallthrough=3 -O1 -g $(HOST_INCLUDES) -iquote test/unit \
                -fsanitize=address,undefined -fno-sanitize-recover=all
HOST_UNIT_TESTS = test/unit/host/test_ring test/unit/host/test_frame \
                test/unit/host/test_backoff test/unit/host/test_proof \
                test/unit/host/test_hostkey test/unit/host/test_msg

$(HOST_BIN): $(HOST_SRCS) $(HOST_HDRS) $(HOST_SHARED) $(HOST_SHARED_HDRS) bothy.control
	$(HOST_CC) $(HOST_CFLAGS) $(BOTHY_BUILD_FLAGS) -o $@ $(HOST_SRCS) $(HOST_SHARED) $(HOST_LIBS)

test/unit/host/test_ring: test/unit/host/test_ring.c src/host/ring.c src/host/ring.h \
        test/unit/unit.h
	$(HOST_CC) $(HOST_UNIT_CFLAGS) -o $@ $< src/host/ring.c

test/unit/host/test_frame: test/unit/host/test_frame.c src/host/frame.c src/host/frame.h \
        test/unit/unit.h
	$(HOST_CC) $(HOST_UNIT_CFLAGS) -o $@ $< src/host/frame.c

test/unit/host/test_backoff: test/unit/host/test_backoff.c src/host/backoff.c \
        src/host/backoff.h test/unit/unit.h
	$(HOST_CC) $(HOST_UNIT_CFLAGS) -o $@ $< src/host/backoff.c

# The signed contexts byte for byte and the fingerprint's test vector.
test/unit/host/test_proof: test/unit/host/test_proof.c src/host/proof.c src/host/proof.h \
        src/host/hostkey.c src/host/hostkey.h $(HOST_SHARED_HDRS) test/unit/unit.h
	$(HOST_CC) $(HOST_UNIT_CFLAGS) -o $@ $< src/host/proof.c src/host/hostkey.c \
	    src/common/base64url.c src/common/uuid.c -lsodium

# The key file against a temporary directory: modes, links, exact contents.
test/unit/host/test_hostkey: test/unit/host/test_hostkey.c src/host/hostkey.c \
        src/host/hostkey.h $(HOST_SHARED_HDRS) test/unit/unit.h
	$(HOST_CC) $(HOST_UNIT_CFLAGS) -o $@ $< src/host/hostkey.c \
	    src/common/base64url.c src/common/uuid.c -lsodium

# The server's ops parsed strictly, and the host's built.
test/unit/host/test_msg: test/unit/host/test_msg.c src/host/msg.c src/host/msg.h \
        src/host/proof.c src/host/proof.h src/host/hostkey.h $(HOST_SHARED_HDRS) test/unit/unit.h
	$(HOST_CC) $(HOST_UNIT_CFLAGS) -o $@ $< src/host/msg.c src/host/proof.c \
	    src/common/base64url.c src/common/uuid.c -ljansson -lsodium

host: $(HOST_BIN) $(HOST_UNIT_TESTS)

EXTRA_CLEAN += $(HOST_BIN) $(HOST_UNIT_TESTS)

.PHONY: host
