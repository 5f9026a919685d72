# src/gateway/crypto.mk: the key store, the tokens and their command line
# (docs/tokens.md, src/gateway/keys/), linked into bothy-gateway by
# gateway.mk, and the unit tests of the token format.  Ed25519 comes from
# libsodium, and so does the base64url codec the keys and tokens are
# written in (src/common/base64url.c, which the host service shares).
# keys/node_keys.c, the serving node's use of the store, is one of the
# daemon's ordinary sources.

GATEWAY_CRYPTO_SRCS = $(addprefix src/gateway/keys/, keystore.c token.c cli_keys.c)
GATEWAY_CRYPTO_LIBS = -lsodium

# The key store and token format against a temporary key directory.
GATEWAY_UNIT_TESTS += test/unit/gateway/test_token
test/unit/gateway/test_token: test/unit/gateway/test_token.c $(GATEWAY_CRYPTO_SRCS) \
        src/gateway/keys/keystore.h src/gateway/keys/token.h src/common/base64url.c \
        src/common/base64url.h $(COMMON_SRCS) test/unit/unit.h test/unit/gateway/unit_json.h
	$(GATEWAY_CC) $(GATEWAY_UNIT_CFLAGS) -I$(GATEWAY_PG_INC) -o $@ $< \
	    $(filter-out src/gateway/keys/cli_keys.c,$(GATEWAY_CRYPTO_SRCS)) src/common/base64url.c \
	    $(COMMON_SRCS) -lsodium -ljansson

EXTRA_CLEAN += test/unit/gateway/test_token
