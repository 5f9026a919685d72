# src/gateway/gateway.mk: the daemon bothy-gateway and the unit tests of its
# pure parts.  Included by the top Makefile after PGXS and crypto.mk, so
# every variable here has a GATEWAY_ name and every rule is explicit: the
# PGXS CFLAGS, CPPFLAGS and LDFLAGS must not reach the daemon.
#
#   make gateway    src/gateway/bothy-gateway and $(GATEWAY_UNIT_TESTS)
#
# The sources live in rooms (docs/development.md, "Rooms"): main.c at the
# top wires core/, keys/ and the routes (clients/, terminal/).  Every include of a
# room names its room ("core/conn.h"), found through -iquote src/gateway;
# src/common's headers are found by their bare name.

GATEWAY_CC      ?= cc
# Every C file of src/gateway/, its rooms and the terminal's wings
# (terminal/control/, relay/, rest/: docs/development.md) but the crypto
# ones (crypto.mk lists those).
GATEWAY_SRCS     = $(filter-out $(GATEWAY_CRYPTO_SRCS),$(wildcard src/gateway/*.c src/gateway/*/*.c \
                   src/gateway/*/*/*.c))
GATEWAY_HDRS     = $(wildcard src/gateway/*/*.h src/gateway/*/*/*.h src/common/*.h)
GATEWAY_BIN      = src/gateway/bothy-gateway
GATEWAY_PG_INC  := $(shell $(PG_CONFIG) --includedir)
GATEWAY_PG_LIB  := $(shell $(PG_CONFIG) --libdir)
GATEWAY_LWS_CFLAGS := $(shell pkg-config --cflags libwebsockets jansson)
# libev: the node's event loop (core/loop.c), lws on it through its plugin
GATEWAY_LWS_LIBS   := $(shell pkg-config --libs libwebsockets jansson) -lev
# -iquote, never -I src/common: src/common/signal.h would shadow <signal.h>;
# and src/gateway itself, never a room: "core/conn.h" names its room
# BOTHY_VERSION: `bothy-gateway --version`, bothy.control's default_version
# (the top Makefile's EXTVERSION), the one place a release is numbered
GATEWAY_CFLAGS   = -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wmissing-prototypes \
                   -Wimplicit-fallthrough=3 -iquote src/common -iquote src/gateway \
                   -I$(GATEWAY_PG_INC) $(GATEWAY_LWS_CFLAGS) -DBOTHY_VERSION='"$(EXTVERSION)"'
GATEWAY_LIBS     = $(GATEWAY_LWS_LIBS) -L$(GATEWAY_PG_LIB) -lpq $(GATEWAY_CRYPTO_LIBS)

# The pure parts, with the sanitizers of the top Makefile's UNIT_CFLAGS.
GATEWAY_UNIT_CFLAGS = -std=gnu11 -Wall -Wextra -Werror -Wmissing-prototypes \
                   -Wimplicit-fallthrough=3 -O1 -g -iquote src/common -iquote src/gateway \
                   -iquote test/unit -fsanitize=address,undefined -fno-sanitize-recover=all
GATEWAY_UNIT_TESTS += test/unit/gateway/test_config test/unit/gateway/test_protocol \
                   test/unit/gateway/test_sendq test/unit/gateway/test_uuidset \
                   test/unit/gateway/test_uuidmap \
                   test/unit/gateway/test_events test/unit/gateway/test_route \
                   test/unit/gateway/test_tmodel test/unit/gateway/test_twire \
                   test/unit/gateway/test_relay_slot test/unit/gateway/test_relay_wire \
                   test/unit/gateway/test_relay_window test/unit/gateway/test_channel

# BOTHY_BUILD_FLAGS: a packager's compile and link flags for the daemons
# only (debian/rules: dpkg-buildflags' hardening), empty otherwise
$(GATEWAY_BIN): $(GATEWAY_SRCS) $(GATEWAY_CRYPTO_SRCS) $(COMMON_SRCS) $(COMMON_DAEMON_SRCS) \
        $(GATEWAY_HDRS) bothy.control
	$(GATEWAY_CC) $(GATEWAY_CFLAGS) $(BOTHY_BUILD_FLAGS) -o $@ $(GATEWAY_SRCS) $(GATEWAY_CRYPTO_SRCS) \
	    $(COMMON_SRCS) $(COMMON_DAEMON_SRCS) $(GATEWAY_LIBS)

# The routes' settings.c beside config.c: the options and settings as the
# routes register them (core/route.h, whose headers need lws' and jansson's).
GATEWAY_CONFIG_SRCS = src/gateway/core/config.c src/gateway/core/route.c \
        src/gateway/clients/settings.c src/gateway/terminal/settings.c src/common/intparse.c
test/unit/gateway/test_config: test/unit/gateway/test_config.c $(GATEWAY_CONFIG_SRCS) \
        src/gateway/core/config.h src/gateway/core/route.h src/gateway/clients/settings.h \
        src/gateway/terminal/settings.h src/common/logline.h src/common/intparse.h test/unit/unit.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) $(GATEWAY_LWS_CFLAGS) -o $@ $< $(GATEWAY_CONFIG_SRCS)

test/unit/gateway/test_protocol: test/unit/gateway/test_protocol.c src/gateway/clients/protocol.c \
        src/gateway/clients/protocol.h src/gateway/core/parse.c src/gateway/core/parse.h \
        $(COMMON_SRCS) test/unit/unit.h test/unit/gateway/unit_json.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) -I$(GATEWAY_PG_INC) -o $@ $< \
	    src/gateway/clients/protocol.c src/gateway/core/parse.c $(COMMON_SRCS) -ljansson

test/unit/gateway/test_sendq: test/unit/gateway/test_sendq.c src/gateway/core/sendq.c \
        src/gateway/core/sendq.h test/unit/unit.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) -o $@ $< src/gateway/core/sendq.c

test/unit/gateway/test_tmodel: test/unit/gateway/test_tmodel.c src/gateway/terminal/model.c \
        src/gateway/terminal/model.h src/common/uuid.c src/common/uuid.h test/unit/unit.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) -o $@ $< src/gateway/terminal/model.c src/common/uuid.c

# The control connection's messages and the host's signatures (libsodium:
# its base64 and Ed25519).
GATEWAY_TWIRE_SRCS = src/gateway/terminal/control/wire.c src/gateway/terminal/hostsig.c \
                   src/gateway/terminal/model.c src/common/base64url.c \
                   src/gateway/core/parse.c
test/unit/gateway/test_twire: test/unit/gateway/test_twire.c $(GATEWAY_TWIRE_SRCS) \
        src/gateway/terminal/control/wire.h src/gateway/terminal/hostsig.h src/gateway/terminal/model.h \
        src/gateway/core/parse.h \
        $(COMMON_SRCS) test/unit/unit.h test/unit/gateway/unit_json.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) -o $@ $< $(GATEWAY_TWIRE_SRCS) $(COMMON_SRCS) \
	    -lsodium -ljansson

# The relay's state machine with a fake clock and a recording io.
test/unit/gateway/test_relay_slot: test/unit/gateway/test_relay_slot.c \
        src/gateway/terminal/relay/slot.c src/gateway/terminal/relay/slot.h \
        src/gateway/core/uuidmap.c src/gateway/core/uuidmap.h \
        src/gateway/terminal/model.h $(COMMON_SRCS) test/unit/unit.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) -o $@ $< src/gateway/terminal/relay/slot.c \
	    src/gateway/core/uuidmap.c $(COMMON_SRCS)

# The stream's text messages (jansson, and libsodium under the base64url codec).
test/unit/gateway/test_relay_wire: test/unit/gateway/test_relay_wire.c \
        src/gateway/terminal/relay/wire.c src/gateway/terminal/relay/wire.h \
        src/gateway/terminal/hostsig.h \
        src/common/base64url.c src/common/base64url.h $(COMMON_SRCS) test/unit/unit.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) -o $@ $< src/gateway/terminal/relay/wire.c \
	    src/common/base64url.c $(COMMON_SRCS) -ljansson -lsodium

# A device's window of unacknowledged output: pure, no library.
test/unit/gateway/test_relay_window: test/unit/gateway/test_relay_window.c \
        src/gateway/terminal/relay/window.c src/gateway/terminal/relay/window.h test/unit/unit.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) -o $@ $< src/gateway/terminal/relay/window.c

test/unit/gateway/test_uuidset: test/unit/gateway/test_uuidset.c src/gateway/core/uuidset.c \
        src/gateway/core/uuidset.h src/gateway/core/uuidmap.c src/gateway/core/uuidmap.h test/unit/unit.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) -o $@ $< src/gateway/core/uuidset.c src/gateway/core/uuidmap.c

# The one UUID-keyed map (pure C: no lws), with v7 keys of the generator.
test/unit/gateway/test_uuidmap: test/unit/gateway/test_uuidmap.c src/gateway/core/uuidmap.c \
        src/gateway/core/uuidmap.h $(COMMON_SRCS) test/unit/unit.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) -o $@ $< src/gateway/core/uuidmap.c $(COMMON_SRCS)

test/unit/gateway/test_events: test/unit/gateway/test_events.c src/gateway/clients/events.c \
        src/gateway/clients/events.h src/gateway/core/uuidlist.c src/gateway/core/uuidlist.h \
        $(COMMON_SRCS) test/unit/unit.h test/unit/gateway/unit_json.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) -o $@ $< src/gateway/clients/events.c \
	    src/gateway/core/uuidlist.c $(COMMON_SRCS) -ljansson

# The routes' tables with two routes registered side by side (a stand-in
# for the terminal route beside the gateway route): lookups by path and
# prefix, refusals, the counted close codes.  route.c needs only lws's and
# jansson's headers.
test/unit/gateway/test_route: test/unit/gateway/test_route.c src/gateway/core/route.c \
        src/gateway/core/route.h src/gateway/core/conn.h src/gateway/core/sendq.h \
        src/gateway/core/metrics.h test/unit/unit.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) $(GATEWAY_LWS_CFLAGS) -o $@ $< src/gateway/core/route.c

# The channel's envelope and its check with the key (libsodium's HMAC).
test/unit/gateway/test_channel: test/unit/gateway/test_channel.c src/gateway/core/channel.c \
        src/gateway/core/channel.h src/common/envelope.c src/common/envelope.h src/common/hex.h \
        test/unit/unit.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) -o $@ $< src/gateway/core/channel.c src/common/envelope.c -lsodium

gateway: $(GATEWAY_BIN) $(GATEWAY_UNIT_TESTS)

EXTRA_CLEAN += $(GATEWAY_BIN) test/unit/gateway/test_config test/unit/gateway/test_protocol \
               test/unit/gateway/test_sendq test/unit/gateway/test_uuidset \
               test/unit/gateway/test_uuidmap test/unit/gateway/test_events test/unit/gateway/test_route \
               test/unit/gateway/test_tmodel test/unit/gateway/test_twire \
               test/unit/gateway/test_relay_slot test/unit/gateway/test_relay_wire \
               test/unit/gateway/test_relay_window test/unit/gateway/test_channel

.PHONY: gateway
