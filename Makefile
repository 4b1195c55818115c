# cmfs - plain, non-recursive GNU make.
#
#   make                       build ./cmfs
#   make check                 unit tests, then integration tests (root, FUSE)
#   make SANITIZE=address,undefined check
#   make check-tsan            unit tests and the concurrent integration
#                              tests under ThreadSanitizer (not in CI)
#   make deps                  install the Debian packages (root)
#   make install PREFIX=/usr DESTDIR=...   (make uninstall: the same files)
#   make man                   check the manual page (groff warnings fail)
#   make deb                   build ../cmfs_<version>_<arch>.deb here

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
DOCDIR  ?= $(PREFIX)/share/doc/cmfs
UNITDIR ?= $(PREFIX)/lib/systemd/system
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
CC      ?= cc
PKG_CONFIG ?= pkg-config
VERSION := 0.1.0

CORE_PKGS := sqlite3 libzip libdeflate inih libcrypto libpq jansson
FS_PKGS   := fuse3 liburing
TEST_PKGS := zlib

# Each sanitizer build has its own objects: ThreadSanitizer cannot link
# with AddressSanitizer's.
BUILD := build$(if $(SANITIZE),$(if $(findstring thread,$(SANITIZE)),-tsan,-san))

WARN := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wold-style-definition -Wwrite-strings \
	-Wformat=2 -Wvla -Wpointer-arith -Werror
OPT  ?= -O2 -g
SANFLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer \
	-fno-sanitize-recover=all)
CFLAGS_ALL := -std=c11 -D_XOPEN_SOURCE=700 -DCMFS_VERSION='"$(VERSION)"' \
	-MMD -MP $(OPT) $(WARN) $(SANFLAGS) $(CFLAGS)
CORE_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(CORE_PKGS))
CORE_LIBS   := $(shell $(PKG_CONFIG) --libs $(CORE_PKGS)) -lpthread
FS_CFLAGS   := $(shell $(PKG_CONFIG) --cflags $(FS_PKGS)) -DFUSE_USE_VERSION=314
FS_LIBS     := $(shell $(PKG_CONFIG) --libs $(FS_PKGS))
TEST_LIBS   := $(shell $(PKG_CONFIG) --libs $(TEST_PKGS))
LDFLAGS_ALL := $(SANFLAGS) $(LDFLAGS)

CORE_SRC := $(wildcard core/*.c)
FS_SRC   := $(wildcard fs/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
TOOL_SRC := $(wildcard tests/tools/*.c)

CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
FS_OBJ   := $(FS_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
UNIT_OBJ := $(BUILD)/tests/fixture.o
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tools/%)
CORE_LIB := $(BUILD)/libcmfscore.a

.PHONY: all cmfs check check-unit check-integ check-tsan clean install \
	uninstall deps bench bench-pg soak fuzz man deb

all: cmfs

# ./cmfs is the binary of the last build, plain or sanitized: copied
# whenever it differs, since a sanitized build leaves a newer ./cmfs that
# a plain build's older build/cmfs must still replace.
cmfs: $(BUILD)/cmfs
	@cmp -s $< $@ || { echo "cp $< $@"; cp $< $@.tmp && mv -f $@.tmp $@; }

$(BUILD)/cmfs: $(FS_OBJ) $(CORE_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $(FS_OBJ) $(CORE_LIB) $(FS_LIBS) $(CORE_LIBS)

$(CORE_LIB): $(CORE_OBJ)
	$(AR) rcs $@ $^

$(BUILD)/core/%.o: core/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(CORE_CFLAGS) -c -o $@ $<

$(BUILD)/fs/%.o: fs/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(CORE_CFLAGS) $(FS_CFLAGS) -Icore -c -o $@ $<

# The helpers every unit test shares (tests/unit/fixture.h).
$(UNIT_OBJ): tests/unit/fixture.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(CORE_CFLAGS) -Icore -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(UNIT_OBJ) $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(CORE_CFLAGS) -Icore -o $@ $< $(UNIT_OBJ) \
		$(CORE_LIB) $(LDFLAGS_ALL) $(CORE_LIBS) $(TEST_LIBS)

$(BUILD)/tools/%: tests/tools/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL)

check: check-unit check-integ

# Each unit binary prints "<file>: N passed, N failed"; the last line sums them.
check-unit: $(UNIT_BIN)
	@p=0; f=0; for t in $(UNIT_BIN); do \
		out=$$(cd tests && ../$$t 2>&1); rc=$$?; printf '%s\n' "$$out"; \
		line=$$(printf '%s\n' "$$out" | tail -n 1); \
		np=$$(printf '%s' "$$line" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p'); \
		nf=$$(printf '%s' "$$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p'); \
		p=$$((p + $${np:-0})); f=$$((f + $${nf:-1})); \
		[ $$rc -eq 0 ] || [ "$${nf:-1}" -gt 0 ] || f=$$((f + 1)); \
	done; echo "unit: $$p passed, $$f failed"; [ $$f -eq 0 ]

check-integ: cmfs $(TOOL_BIN)
	CMFS_BUILD=$(BUILD) sh tests/integ/run.sh

# ThreadSanitizer over the unit tests and the integration tests that drive
# requests in parallel: a report fails a unit binary (its exit code) or an
# integration test (lib.sh finds it in the daemon's log).  The daemon is
# build-tsan/cmfs; ./cmfs stays the last plain or ASan build.  Built
# first, so that no compiler runs beside the tests (some are timed).
TSAN_INTEG ?= t_stress t_replace t_chaos t_upload t_rcache t_passthrough \
	t_versions t_uring
check-tsan:
	$(MAKE) SANITIZE=thread build-tsan/cmfs \
		$(TOOL_BIN:$(BUILD)/%=build-tsan/%) \
		$(UNIT_BIN:$(BUILD)/%=build-tsan/%)
	$(MAKE) SANITIZE=thread check-unit
	CMFS_BUILD=build-tsan CMFS=$(CURDIR)/build-tsan/cmfs \
		sh tests/integ/run.sh $(TSAN_INTEG:%=%.sh)

bench: cmfs
	sh bench/run.sh

bench-pg: cmfs
	sh bench/pg.sh

soak: cmfs
	sh bench/soak.sh

deps:
	sh .ci/deps

# libFuzzer targets: tests/fuzz/fuzz_<name>.c, seeded from
# tests/fuzz/corpus/<name>/ (a scratch copy, so the tree stays clean);
# the DDL parser also from every statement in tests/ddl/.
# Each runs for FUZZ_SECONDS; a crash fails the target and leaves the input
# in build-fuzz/.
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
FUZZ_SECONDS ?= 60
build-fuzz/%: tests/fuzz/%.c $(CORE_SRC)
	@mkdir -p $(@D)
	clang -std=c11 -D_XOPEN_SOURCE=700 -DCMFS_VERSION='"$(VERSION)"' -g -O1 \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(CORE_CFLAGS) -Icore -o $@ $< $(CORE_SRC) $(CORE_LIBS) \
		$(TEST_LIBS)

fuzz: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do n=$${f#build-fuzz/fuzz_}; \
		rm -rf build-fuzz/corpus-$$n; mkdir -p build-fuzz/corpus-$$n; \
		cp -r tests/fuzz/corpus/$$n/. build-fuzz/corpus-$$n/ 2>/dev/null; \
		if [ $$n = ddl ]; then cp tests/ddl/*/*.sql build-fuzz/corpus-ddl/; fi; \
		echo "fuzz $$n: $(FUZZ_SECONDS)s"; \
		(cd build-fuzz && ./fuzz_$$n -max_total_time=$(FUZZ_SECONDS) \
			-rss_limit_mb=2048 -timeout=10 corpus-$$n >fuzz_$$n.log 2>&1) \
		|| { tail -n 30 build-fuzz/fuzz_$$n.log; exit 1; }; \
		grep -E '^Done|stat::number_of_executed_units' build-fuzz/fuzz_$$n.log | tail -n 1; \
	done

# What an operator gets: the binary, the manual, the example ini and the
# documentation, the systemd unit (pointed at BINDIR), the fstab example
# and the bash completion.  uninstall removes exactly these files.
INSTALLED := $(BINDIR)/cmfs $(MANDIR)/man8/cmfs.8 \
	$(DOCDIR)/cmfs.ini.example $(DOCDIR)/README.md \
	$(DOCDIR)/README.contrib.md $(DOCDIR)/examples/fstab.example \
	$(UNITDIR)/cmfs@.service $(COMPLETIONDIR)/cmfs

install: cmfs
	install -D -m 0755 cmfs $(DESTDIR)$(BINDIR)/cmfs
	install -D -m 0644 man/cmfs.8 $(DESTDIR)$(MANDIR)/man8/cmfs.8
	install -D -m 0644 cmfs.ini.example $(DESTDIR)$(DOCDIR)/cmfs.ini.example
	install -D -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -D -m 0644 contrib/README.md $(DESTDIR)$(DOCDIR)/README.contrib.md
	install -D -m 0644 contrib/fstab.example \
		$(DESTDIR)$(DOCDIR)/examples/fstab.example
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|/usr/bin/cmfs|$(BINDIR)/cmfs|' 'contrib/cmfs@.service' \
		>'$(DESTDIR)$(UNITDIR)/cmfs@.service'
	chmod 0644 '$(DESTDIR)$(UNITDIR)/cmfs@.service'
	install -D -m 0644 contrib/cmfs.bash-completion \
		$(DESTDIR)$(COMPLETIONDIR)/cmfs

uninstall:
	rm -f $(foreach f,$(INSTALLED),'$(DESTDIR)$(f)')
	-rmdir '$(DESTDIR)$(DOCDIR)/examples' '$(DESTDIR)$(DOCDIR)' 2>/dev/null

man:
	@out=$$(groff -t -man -ww -z man/cmfs.8 2>&1); \
	if [ -n "$$out" ]; then printf '%s\n' "$$out"; exit 1; fi
	@echo "man/cmfs.8: no warnings"

# The Debian package, from this tree (debian/); the .deb lands in ../.
# dpkg-buildpackage cleans the tree first (make clean).
deb:
	dpkg-buildpackage -us -uc -b

clean:
	rm -rf build build-san build-tsan build-fuzz cmfs

-include $(shell find build build-san build-tsan -name '*.d' 2>/dev/null)
