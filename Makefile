# bothy: the PostgreSQL extension (built with PGXS) and its test suites.
#
#   make            build the extension (needs only the server headers)
#   make install    install the extension into the server's directories, and
#                   bothy-gateway and bothy-host with their man pages
#                   (GATEWAY_BINDIR, GATEWAY_MANDIR, HOST_BINDIR, HOST_MANDIR)
#   make test       run every suite on temporary PostgreSQL instances
#
# The install script bothy--$(EXTVERSION).sql is built from the parts in
# src/sql/ (read in name order): one source of truth for the current
# version.  Released versions keep their frozen scripts and upgrade scripts
# beside it (see docs/development.md).

EXTENSION   = bothy
EXTVERSION  = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" bothy.control)

# src/common's daemon-only files need a library the server does not load
# (base64url.c: libsodium; logline.c: libwebsockets), so they stay out of
# bothy.so, the unit tests of src/common and the fuzzer; gateway.mk and
# host.mk link them.
COMMON_DAEMON_SRCS = src/common/base64url.c src/common/logline.c
COMMON_SRCS = $(filter-out $(COMMON_DAEMON_SRCS),$(wildcard src/common/*.c))
EXT_SRCS    = $(wildcard src/extension/*.c)
MODULE_big  = bothy
OBJS        = $(EXT_SRCS:.c=.o) $(COMMON_SRCS:.c=.o)

SQL_PARTS   = $(sort $(wildcard src/sql/*.sql))
# The upgrade from the last release is built too, from the parts that are new
# or changed since it (the channel's key, the device binds, the hint task,
# the seam's audience, the terminal)
# and the privileges (idempotent), until the next release freezes it: a part
# changed meanwhile changes both scripts, so a part of the release before is
# in the list only with CREATE OR REPLACE.
UPGRADE_FROM  = 0.2.0
UPGRADE_PARTS = src/sql/15_channel.sql src/sql/41_device_bindings.sql src/sql/46_hints_decide.sql src/sql/51_seam_audience.sql src/sql/52_seam_audience_here.sql \
                $(sort $(wildcard src/sql/7*_terminal_*.sql)) \
                src/sql/90_privileges.sql
UPGRADE_built = bothy--$(UPGRADE_FROM)--$(EXTVERSION).sql
DATA_built  = bothy--$(EXTVERSION).sql $(UPGRADE_built)
DATA        = $(filter-out $(DATA_built),$(wildcard bothy--*.sql))
EXTRA_CLEAN = $(DATA_built) test/unit/test_signal test/unit/test_uuid test/unit/test_intparse \
              test/fuzz/fuzz_signal

PG_CONFIG  ?= pg_config
# -iquote: src/common/signal.h must not shadow the system <signal.h>
PG_CPPFLAGS = -iquote src/common -iquote src/extension -DBOTHY_SCHEMA_VERSION='"$(EXTVERSION)"'
# Warnings are errors; the server headers are not -Wextra clean for these two.
PG_CFLAGS   = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies; a stale object with an old layout of
# a shared-memory struct would corrupt it, so every header rebuilds all.
$(OBJS): $(wildcard src/extension/*.h src/common/*.h)

bothy--$(EXTVERSION).sql: $(SQL_PARTS) bothy.control Makefile
	@{ echo "-- bothy $(EXTVERSION): built from src/sql/ by make; edit the parts, not this file."; \
	   printf '%s\n' '\echo Use "CREATE EXTENSION bothy" to load this file. \quit'; \
	   for f in $(SQL_PARTS); do echo; echo "-- $$f"; cat $$f; done; } > $@

$(UPGRADE_built): $(UPGRADE_PARTS) bothy.control Makefile
	@{ echo "-- bothy $(UPGRADE_FROM) -> $(EXTVERSION): built from src/sql/ by make; edit the parts, not this file."; \
	   printf '%s\n' '\echo Use "ALTER EXTENSION bothy UPDATE TO '"'"'$(EXTVERSION)'"'"'" to load this file. \quit'; \
	   for f in $(UPGRADE_PARTS); do echo; echo "-- $$f"; cat $$f; done; } > $@



# --- C unit tests and the fuzzer for src/common (no server needed) ---------

UNIT_CC     ?= cc
UNIT_CFLAGS  = -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror \
               -Wmissing-prototypes -Wdeclaration-after-statement \
               -Wimplicit-fallthrough=3 -O1 -g -iquote src/common -iquote test/unit \
               -fsanitize=address,undefined -fno-sanitize-recover=all
UNIT_TESTS   = test/unit/test_signal test/unit/test_uuid test/unit/test_intparse

unit: $(UNIT_TESTS)

test/unit/test_%: test/unit/test_%.c $(wildcard test/unit/*.h) $(COMMON_SRCS) $(wildcard src/common/*.h)
	$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $< $(COMMON_SRCS)

FUZZ_CC     ?= clang
test/fuzz/fuzz_signal: test/fuzz/fuzz_signal.c test/unit/signal_equal.h $(COMMON_SRCS) $(wildcard src/common/*.h)
	$(FUZZ_CC) -g -O1 -Wall -Wextra -Werror -iquote src/common \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $< $(COMMON_SRCS)

fuzz: test/fuzz/fuzz_signal

# --- the gateway daemon: src/gateway/bothy-gateway and its unit tests -------
# crypto.mk: the key store and tokens; gateway.mk: the daemon.  Both define
# their objects and unit tests; `make gateway` builds all of it.
include src/gateway/crypto.mk
include src/gateway/gateway.mk
# --- the host service: src/host/bothy-host and its unit tests (`make host`) -
include src/host/host.mk

# --- make install: the extension (PGXS), the gateway and the host service ---
# PGXS's install puts the extension into the server's directories; this adds
# the daemon and its man page (docs/operations.md), and the host service and
# its man page (docs/host.md), building each first.  DESTDIR stages them,
# for a package.  WITH_GATEWAY=no installs the extension alone (test/run-all:
# the suites run the binaries of the checkout); WITH_HOST=no leaves out only
# the host service (it runs on the machines people open shells on, not
# beside the gateways).
GATEWAY_BINDIR ?= /usr/local/bin
GATEWAY_MANDIR ?= /usr/local/share/man
GATEWAY_MAN     = docs/bothy-gateway.1
WITH_GATEWAY   ?= yes

install-gateway: $(GATEWAY_BIN)
	install -D -m 0755 $(GATEWAY_BIN) $(DESTDIR)$(GATEWAY_BINDIR)/bothy-gateway
	install -D -m 0644 $(GATEWAY_MAN) $(DESTDIR)$(GATEWAY_MANDIR)/man1/bothy-gateway.1

uninstall-gateway:
	rm -f $(DESTDIR)$(GATEWAY_BINDIR)/bothy-gateway $(DESTDIR)$(GATEWAY_MANDIR)/man1/bothy-gateway.1

HOST_BINDIR    ?= $(GATEWAY_BINDIR)
HOST_MANDIR    ?= $(GATEWAY_MANDIR)
HOST_MAN        = docs/bothy-host.1
WITH_HOST      ?= $(WITH_GATEWAY)

install-host: $(HOST_BIN)
	install -D -m 0755 $(HOST_BIN) $(DESTDIR)$(HOST_BINDIR)/bothy-host
	install -D -m 0644 $(HOST_MAN) $(DESTDIR)$(HOST_MANDIR)/man1/bothy-host.1

uninstall-host:
	rm -f $(DESTDIR)$(HOST_BINDIR)/bothy-host $(DESTDIR)$(HOST_MANDIR)/man1/bothy-host.1

ifeq ($(WITH_GATEWAY),yes)
install: install-gateway
uninstall: uninstall-gateway
endif
ifeq ($(WITH_HOST),yes)
install: install-host
uninstall: uninstall-host
endif

.PHONY: install-gateway uninstall-gateway install-host uninstall-host

test: all unit fuzz gateway host
	test/run-all

.PHONY: unit fuzz test

# --- make demo: a local cluster and its page (demo/run, README "Try it") ---
# Installs missing packages, builds, then runs PostgreSQL, two gateway nodes,
# the nginx edge and a driver under .demo/ until Ctrl-C.
demo:
	demo/run

.PHONY: demo

# --- make deb: the Debian packages (debian/, docs/operations.md) ------------
# First the build dependencies this machine misses (debian/install-build-deps:
# apt-get build-dep as root; another user is shown the line to run), then
# dpkg-buildpackage on a copy of the tree in build/deb/ (its clean step
# would clean this one), so the packages postgresql-15-bothy, bothy-gateway
# and bothy-host land in build/deb/, where test/compose and images/ take them.
DEB_DIR ?= build/deb
deb:
	debian/install-build-deps
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/bothy-$(EXTVERSION)
	tar -cf - --exclude=./.git --exclude=./build --exclude=./.demo --exclude='./test/browser/node_modules' \
	    --exclude=./artifacts --exclude='*/node_modules' . | tar -C $(DEB_DIR)/bothy-$(EXTVERSION) -xf -
	cd $(DEB_DIR)/bothy-$(EXTVERSION) && $(MAKE) -s clean >/dev/null && dpkg-buildpackage -b -us -uc
	rm -rf $(DEB_DIR)/bothy-$(EXTVERSION)
	ls $(DEB_DIR)/*.deb

.PHONY: deb
