# timens — clocks of their own for containers, in user space.
#
#   make            build everything (build/)
#   make check      unit + live + bats tests, and an ASan+UBSan build of unit + live
#   make demo       build, then run real programs under shifted clocks
#   make bench      benchmarks, printed side by side with their baselines
#   make lint       clang-format --dry-run, shellcheck, cppcheck
#   make fuzz       run the libFuzzer targets for longer (FUZZ_SECONDS each)
#   make install    PREFIX=/usr/local DESTDIR= (builds the programs only)
#   make deps       install missing Debian build/test dependencies (apt-get)
#
# Knobs: WERROR=1 (default; 0 to let warnings through), ASAN=1 (build into
# build-asan/ with ASan+UBSan), V=1 (show commands).

.DEFAULT_GOAL := all

WERROR ?= 1
ASAN ?= 0
V ?= 0
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
MANDIR ?= $(PREFIX)/share/man
LIBEXECDIR ?= $(PREFIX)/libexec
# timens-runtime's runtime.conf: /etc whatever PREFIX is, where docker's
# and containerd's own configuration is.
SYSCONFDIR ?= /etc
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/vendor-completions
# podman reads hooks from /usr/share/containers/oci/hooks.d (a distribution's)
# and /etc/containers/oci/hooks.d (the administrator's), never from under
# /usr/local: a local install puts its hook where the administrator's go.
HOOKSDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/share/containers/oci/hooks.d,/etc/containers/oci/hooks.d)
# Where systemd looks for units under PREFIX (systemd.pc's own variable, with
# its prefix moved to ours; systemd also reads /usr/local/lib/systemd/system),
# and for tmpfiles.d and sysusers.d files (it reads $(PREFIX)/lib/ of both).
UNITDIR ?= $(or $(shell pkg-config --define-variable=prefix=$(PREFIX) --define-variable=rootprefix=$(PREFIX) \
	--variable=systemdsystemunitdir systemd 2>/dev/null),$(PREFIX)/lib/systemd/system)
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
FUZZ_SECONDS ?= 60

CC ?= gcc
FUZZ_CC ?= clang

ifeq ($(ASAN),1)
BUILDDIR ?= build-asan
else
BUILDDIR ?= build
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

PKGS := libseccomp libsystemd json-c
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lseccomp -lsystemd -ljson-c)

# Warnings as bubblewrap's meson.build sets them.
WARNINGS := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
	-Wformat=2 -Wundef -Wpointer-arith -Wcast-align -Wwrite-strings \
	-Wnull-dereference -Wimplicit-fallthrough -Wvla -Wdate-time \
	-Werror=implicit-function-declaration -Werror=return-type \
	-Wno-unused-parameter # callbacks of sd-event and libseccomp share one signature
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif

SAN_FLAGS :=
ifeq ($(ASAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif

BASE_CFLAGS := -std=gnu11 -O2 -g -D_GNU_SOURCE -fno-strict-aliasing -fstack-protector-strong \
	-D_FORTIFY_SOURCE=2 -fPIC $(WARNINGS) $(SAN_FLAGS) $(PKG_CFLAGS)
ALL_CFLAGS := $(BASE_CFLAGS) $(CFLAGS)
# A GNU build id in every program: timensd keys what it hands a successor
# of the same build on it (lib/supervisor/supervisor-proof-cache.c).
ALL_LDFLAGS := -Wl,--build-id $(SAN_FLAGS) $(LDFLAGS)

# The layers, lowest first. A folder sees the headers of the folders its
# LAYER_INC_ entry lists and no others: every #include "..." names a bare
# file (scripts/check-layers.sh), so an include across a forbidden edge
# does not compile. docs/ARCHITECTURE.md draws the same graph.
#   lib/core        pure: time arithmetic, parsers, emulation, names
#   proto           the control protocol's wire types (on core)
#   lib/kernel      thin edges around seccomp, ptrace, /proc, pidfds, memfds
#   lib/oci         OCI state, annotations, config.json edits
#   lib/client      the client of timensd's socket
#   lib/supervisor  the engine that serves trapped calls and execs
#   lib/registry    named namespaces, life cycle, restarts (above the engine)
#   daemon/timensd, daemon/timensctl, contrib/oci-hook: one folder per program
LIB_LAYERS := lib/core lib/kernel lib/oci lib/client lib/supervisor lib/registry
LAYER_INC_lib/core := lib/core
LAYER_INC_proto := lib/core proto
LAYER_INC_lib/kernel := lib/core lib/kernel
LAYER_INC_lib/oci := lib/core lib/kernel lib/oci
LAYER_INC_lib/client := lib/core proto lib/client
LAYER_INC_lib/supervisor := lib/core lib/kernel lib/supervisor
LAYER_INC_lib/registry := $(LAYER_INC_lib/supervisor) lib/registry
ALL_LIB_INC := $(LIB_LAYERS) proto
LAYER_INC_daemon/timensd := $(ALL_LIB_INC) daemon/timensd
LAYER_INC_daemon/timensctl := $(ALL_LIB_INC) daemon/timensctl
LAYER_INC_contrib/oci-hook := lib/core proto lib/oci lib/client
LAYER_INC_daemon/timens-runtime := lib/core proto lib/kernel lib/oci lib/client daemon/timens-runtime
LAYER_INC_vdso-patch := lib/core
# The include flags of the folder a source file is in (an unknown folder
# is an error, so that a new one is placed in the graph on purpose).
layer_inc = $(addprefix -I,$(or $(LAYER_INC_$(patsubst %/,%,$(dir $(1)))),$(error $(1): its folder has no LAYER_INC_ entry in the Makefile)))
TEST_INC := $(addprefix -I,$(ALL_LIB_INC) tests/include)
# `make -s layer-flags DIR=lib/core`: what a file of that folder is
# compiled with (tests/bats/layers.bats compiles forbidden includes).
layer-flags:
	@echo $(BASE_CFLAGS) $(call layer_inc,$(DIR)/x.c)

# proto/ (the control protocol's wire types) is part of the library: the
# daemon, the client in lib/client/ and the tests share it.
LIB_SRCS := $(foreach d,$(LIB_LAYERS),$(wildcard $(d)/*.c)) $(wildcard proto/*.c)
LIB_HDRS := $(foreach d,$(LIB_LAYERS),$(wildcard $(d)/*.h)) $(wildcard proto/*.h)
LIB_OBJS := $(patsubst %.c,$(BUILDDIR)/%.o,$(LIB_SRCS))
# Our vDSO image, embedded into libtimens (appends to LIB_OBJS).
include vdso-patch/vdso.mk
LIBTIMENS := $(BUILDDIR)/libtimens.a

CTL_SRCS := $(wildcard daemon/timensctl/*.c)
CTL_OBJS := $(patsubst %.c,$(BUILDDIR)/%.o,$(CTL_SRCS))

TIMENSD_SRCS := $(wildcard daemon/timensd/*.c)
TIMENSD_OBJS := $(patsubst %.c,$(BUILDDIR)/%.o,$(TIMENSD_SRCS))
# Everything of timensd but main(): what the fuzz target drives.
# (and but the BPF side, which the fuzz target has no use for).
TIMENSD_CORE_SRCS := $(filter-out daemon/timensd/timensd-main.c daemon/timensd/timensd-entrants.c,$(TIMENSD_SRCS))

# timensd's BPF program (daemon/timensd/bpf/): compiled once for any kernel with BTF
# (CO-RE: vmlinux.h is generated from this kernel's BTF by bpftool), and
# embedded into timensd as a skeleton (bpftool gen skeleton).
BPF_CLANG ?= clang
BPFTOOL ?= bpftool
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
BPF_DIR := $(BUILDDIR)/bpf
BPF_SKEL := $(BPF_DIR)/exec-watch.skel.h
TIMENSD_LIBS := $(shell pkg-config --libs libbpf libnl-3.0 2>/dev/null || echo -lbpf -lnl-3)

UNIT_SRCS := $(wildcard tests/unit/test-*.c)
UNIT_BINS := $(patsubst %.c,$(BUILDDIR)/%,$(UNIT_SRCS))
LIVE_SRCS := $(wildcard tests/live/test-*.c)
LIVE_BINS := $(patsubst %.c,$(BUILDDIR)/%,$(LIVE_SRCS))
HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(patsubst %.c,$(BUILDDIR)/%,$(HELPER_SRCS))
BENCH_SRCS := $(wildcard tests/bench/bench-*.c)
BENCH_BINS := $(patsubst %.c,$(BUILDDIR)/%,$(BENCH_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz-*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,build-fuzz/%,$(FUZZ_SRCS))

HOOK_SRCS := $(wildcard contrib/oci-hook/*.c)
HOOK_OBJS := $(patsubst %.c,$(BUILDDIR)/%.o,$(HOOK_SRCS))
RUNTIME_SRCS := $(wildcard daemon/timens-runtime/*.c)
RUNTIME_OBJS := $(patsubst %.c,$(BUILDDIR)/%.o,$(RUNTIME_SRCS))
# Where `make install` puts the programs, so that the hook and timensctl
# find timensd and oci-config writes the hook's path into bundles: written
# into $(BUILDDIR)/paths.h, which is rewritten only when a value changes
# (git's GIT-CFLAGS trick), so that `make install PREFIX=/usr` after a plain
# `make` rebuilds exactly the objects that embed a path.
PATHS_H := $(BUILDDIR)/paths.h
PATHS_USERS := $(BUILDDIR)/daemon/timensctl/timensctl-oci-config.o $(BUILDDIR)/daemon/timensctl/timensctl-daemon-client.o $(HOOK_OBJS) \
	$(BUILDDIR)/daemon/timens-runtime/timens-runtime.o $(BUILDDIR)/daemon/timens-runtime/timens-runtime-conf.o

PROGRAMS := $(BUILDDIR)/timensctl $(BUILDDIR)/timensd $(BUILDDIR)/timens-oci-hook $(BUILDDIR)/timens-runtime

.PHONY: layer-flags all programs check check-quick demo bench kselftests lint fuzz install uninstall deps deps-auto deps-demo clean \
	tests unit live bats asan-check fuzz-smoke FORCE

all: $(PROGRAMS) tests

# What install needs: the programs, not the tests (nor their tools).
programs: $(PROGRAMS)

tests: $(UNIT_BINS) $(LIVE_BINS) $(HELPER_BINS) $(BENCH_BINS)

# -MMD -MP: each object depends on the headers it includes, and a header
# that goes away does not break the build.
DEPFLAGS = -MMD -MP
LAYERS_OK := $(BUILDDIR)/.layers-ok

$(LAYERS_OK): scripts/check-layers.sh $(LIB_SRCS) $(LIB_HDRS) $(CTL_SRCS) $(TIMENSD_SRCS) $(HOOK_SRCS) $(RUNTIME_SRCS) $(wildcard daemon/*/*.h)
	@mkdir -p $(dir $@)
	$(Q)scripts/check-layers.sh && touch $@

$(BUILDDIR)/%.o: %.c | $(LAYERS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(call layer_inc,$<) $(DEPFLAGS) -fvisibility=hidden -c -o $@ $<

-include $(shell find $(BUILDDIR) -name '*.d' 2>/dev/null)

$(LIBTIMENS): $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILDDIR)/timensctl: $(CTL_OBJS) $(LIBTIMENS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(CTL_OBJS) $(LIBTIMENS) $(PKG_LIBS)

$(BUILDDIR)/timens-oci-hook: $(HOOK_OBJS) $(LIBTIMENS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(HOOK_OBJS) $(LIBTIMENS) $(PKG_LIBS)

$(BUILDDIR)/timens-runtime: $(RUNTIME_OBJS) $(LIBTIMENS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(RUNTIME_OBJS) $(LIBTIMENS) $(PKG_LIBS)

$(PATHS_H): FORCE
	@mkdir -p $(dir $@)
	$(Q)printf '/* Generated by the Makefile from PREFIX, SBINDIR, LIBEXECDIR and SYSCONFDIR. */\n#pragma once\n#define TNS_OCI_HOOK_PATH "%s"\n#define TNS_TIMENSD_PATH "%s"\n#define TNS_RUNTIME_CONF_PATH "%s"\n' \
		'$(LIBEXECDIR)/timens/timens-oci-hook' '$(SBINDIR)/timensd' '$(SYSCONFDIR)/timens/runtime.conf' >$@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi

$(PATHS_USERS): $(PATHS_H)
$(PATHS_USERS): ALL_CFLAGS += -I$(BUILDDIR)

$(BUILDDIR)/timensd: $(TIMENSD_OBJS) $(LIBTIMENS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(TIMENSD_OBJS) $(LIBTIMENS) $(PKG_LIBS) $(TIMENSD_LIBS)

$(BPF_DIR)/vmlinux.h:
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  BTF     $@")
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c >$@.tmp && mv $@.tmp $@

$(BPF_DIR)/%.bpf.o: daemon/timensd/bpf/%.bpf.c $(BPF_DIR)/vmlinux.h
	@$(if $(Q),echo "  BPF     $@")
	$(Q)$(BPF_CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(BPF_DIR) -Wall -Werror -c -o $@ $<

$(BPF_DIR)/%.skel.h: $(BPF_DIR)/%.bpf.o
	@$(if $(Q),echo "  SKEL    $@")
	$(Q)$(BPFTOOL) gen skeleton $< name exec_watch_bpf >$@.tmp && mv $@.tmp $@

$(BUILDDIR)/daemon/timensd/timensd-entrants.o: $(BPF_SKEL)
$(BUILDDIR)/daemon/timensd/timensd-entrants.o: ALL_CFLAGS += -I$(BPF_DIR) $(shell pkg-config --cflags libnl-3.0 2>/dev/null || echo -I/usr/include/libnl3)

# Unit, live and helper programs: one source file each, linked with the library.
$(BUILDDIR)/tests/%: tests/%.c $(LIBTIMENS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(TEST_INC) $(DEPFLAGS) -MT $@ -MF $@.d $(ALL_LDFLAGS) -o $@ $< $(LIBTIMENS) $(PKG_LIBS) -lm

# Static variants of the probes, so tests cover binaries that carry their
# own libc.
$(BUILDDIR)/tests/helpers/%-static: tests/helpers/%.c $(LIBTIMENS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(BASE_CFLAGS) $(TEST_INC) -static -o $@ $< -lm

# libFuzzer targets (clang only), with ASan+UBSan.
# The generated image source comes along: libtimens always embeds one.
build-fuzz/%: tests/fuzz/%.c $(LIB_SRCS) $(VDSO_IMAGE_C) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(FUZZ_CC) -std=gnu11 -g -O1 -D_GNU_SOURCE $(TEST_INC) -Idaemon/timensd $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-o $@ $< $(LIB_SRCS) $(VDSO_IMAGE_C) $(FUZZ_EXTRA_SRCS) $(PKG_LIBS)

# fuzz-proto drives timensd's request parser and dispatcher as well.
build-fuzz/fuzz-proto: FUZZ_EXTRA_SRCS = $(TIMENSD_CORE_SRCS)
build-fuzz/fuzz-proto: $(TIMENSD_CORE_SRCS) $(wildcard daemon/timensd/*.h)

deps:
	scripts/deps.sh build test

# demo and check install what is missing on their own (a fresh Debian 12):
# demo only what building and tests/demo.sh need, check the test tools too.
deps-auto:
	@scripts/deps.sh --check build test >/dev/null 2>&1 || scripts/deps.sh build test

deps-demo:
	@scripts/deps.sh --check build demo >/dev/null 2>&1 || scripts/deps.sh build demo

# The demo runs timensctl alone (no daemon, no test programs).
demo: deps-demo
	$(Q)$(MAKE) --no-print-directory $(BUILDDIR)/timensctl
	$(Q)tests/demo.sh $(BUILDDIR)

check: deps-auto
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory ASAN=1 tests
	$(Q)$(MAKE) --no-print-directory $(FUZZ_BINS)
	$(Q)tests/run-all.sh

bench: deps-auto
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/bench/run.sh $(BUILDDIR)

# The kernel's own timens selftests, compiled unmodified from a kernel tree
# (KSRC=/path/to/linux), under timensctl run with and without offsets, as
# root: nothing of them is copied here (tests/bats/selftests.bats).
kselftests:
	$(Q)test -n "$(KSRC)" -a -f "$(KSRC)/tools/testing/selftests/timens/timens.c" || \
		{ echo "make kselftests KSRC=/path/to/linux: a kernel tree with tools/testing/selftests/timens" >&2; exit 2; }
	$(Q)$(MAKE) --no-print-directory all
	$(Q)TIMENS_KSELFTESTS="$(abspath $(KSRC))/tools/testing/selftests/timens" bats -f "timens selftests, compiled unmodified" tests/bats/selftests.bats

fuzz: deps-auto $(FUZZ_BINS)
	$(Q)for f in $(FUZZ_BINS); do \
		mkdir -p build-fuzz/corpus/$$(basename $$f); \
		$$f -max_total_time=$(FUZZ_SECONDS) build-fuzz/corpus/$$(basename $$f) tests/fuzz/corpus/$$(basename $$f) || exit 1; \
	done

lint:
	@scripts/deps.sh --check lint >/dev/null 2>&1 || scripts/deps.sh lint
	clang-format --dry-run --Werror $(LIB_SRCS) $(CTL_SRCS) $(TIMENSD_SRCS) $(HOOK_SRCS) $(RUNTIME_SRCS) $(LIB_HDRS) $(wildcard daemon/*/*.h daemon/timensd/bpf/*.c)
	shellcheck -x scripts/*.sh tests/*.sh tests/bench/*.sh .ci/run contrib/kubernetes/timens-node.sh
	shellcheck -s bash -x tests/bats/*.bats tests/bats/*.bash contrib/bash-completion/timensctl
	# memleak: cppcheck does not understand __attribute__((cleanup)), which
	# frees on every return (CONTRIBUTING.md); ASan's leak checker covers it.
	# daemon/timensd/bpf: BPF C (SEC() and vmlinux.h), checked by clang -Wall
	# -Werror and by the kernel's verifier at every start of timensd.
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance --suppress=memleak \
		--inline-suppr --suppress=missingIncludeSystem -D_GNU_SOURCE $(addprefix -I,$(ALL_LIB_INC)) -idaemon/timensd/bpf lib proto daemon contrib/oci-hook

install: programs
	install -Dm755 $(BUILDDIR)/timensctl $(DESTDIR)$(BINDIR)/timensctl
	install -Dm755 $(BUILDDIR)/timensd $(DESTDIR)$(SBINDIR)/timensd
	install -Dm644 man/timensctl.1 $(DESTDIR)$(MANDIR)/man1/timensctl.1
	install -Dm644 man/timensd.8 $(DESTDIR)$(MANDIR)/man8/timensd.8
	install -Dm644 contrib/bash-completion/timensctl $(DESTDIR)$(BASHCOMPDIR)/timensctl
	install -Dm644 contrib/completion/_timensctl $(DESTDIR)$(ZSHCOMPDIR)/_timensctl
	install -Dm755 $(BUILDDIR)/timens-oci-hook $(DESTDIR)$(LIBEXECDIR)/timens/timens-oci-hook
	install -Dm644 man/timens-oci-hook.8 $(DESTDIR)$(MANDIR)/man8/timens-oci-hook.8
	install -Dm755 $(BUILDDIR)/timens-runtime $(DESTDIR)$(BINDIR)/timens-runtime
	sed 's|/usr/local/bin/timens\\-runtime|$(BINDIR)/timens\\-runtime|g' man/timens-runtime.8 | \
		install -Dm644 /dev/stdin $(DESTDIR)$(MANDIR)/man8/timens-runtime.8
	@echo "install: docker: add to /etc/docker/daemon.json: {\"runtimes\": {\"timens\": {\"path\": \"$(BINDIR)/timens-runtime\"}}}"
	for f in timens timens-poststop; do \
		sed 's|@HOOK@|$(LIBEXECDIR)/timens/timens-oci-hook|' contrib/oci-hook/$$f.json.in | \
			install -Dm644 /dev/stdin $(DESTDIR)$(HOOKSDIR)/$$f.json || exit 1; \
	done
	sed 's|@SBINDIR@|$(SBINDIR)|' systemd/timensd.service.in | install -Dm644 /dev/stdin $(DESTDIR)$(UNITDIR)/timensd.service
	install -Dm644 systemd/timensd.socket $(DESTDIR)$(UNITDIR)/timensd.socket
	install -Dm644 systemd/timensd-agent.socket $(DESTDIR)$(UNITDIR)/timensd-agent.socket
	install -Dm644 systemd/timens.tmpfiles $(DESTDIR)$(TMPFILESDIR)/timens.conf
	install -Dm644 systemd/timens.sysusers $(DESTDIR)$(SYSUSERSDIR)/timens.conf
	@# The group timens (who may use timensd's socket) exists once
	@# systemd-sysusers has read our file: a package's postinst runs it, so
	@# we do on the live system; into a DESTDIR we only say so.
	$(Q)if [ -n "$(DESTDIR)" ]; then \
		echo "install: run 'systemd-sysusers $(SYSUSERSDIR)/timens.conf' on the target to create the group timens"; \
	elif command -v systemd-sysusers >/dev/null; then \
		systemd-sysusers $(SYSUSERSDIR)/timens.conf; \
	else \
		echo "install: no systemd-sysusers: create the group timens yourself (groupadd --system timens)"; \
	fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/timensctl $(DESTDIR)$(MANDIR)/man1/timensctl.1
	rm -f $(DESTDIR)$(SBINDIR)/timensd $(DESTDIR)$(MANDIR)/man8/timensd.8 $(DESTDIR)$(BASHCOMPDIR)/timensctl
	rm -f $(DESTDIR)$(ZSHCOMPDIR)/_timensctl
	rm -f $(DESTDIR)$(LIBEXECDIR)/timens/timens-oci-hook $(DESTDIR)$(MANDIR)/man8/timens-oci-hook.8
	rm -f $(DESTDIR)$(BINDIR)/timens-runtime $(DESTDIR)$(MANDIR)/man8/timens-runtime.8
	rm -f $(DESTDIR)$(HOOKSDIR)/timens.json $(DESTDIR)$(HOOKSDIR)/timens-poststop.json
	rm -f $(DESTDIR)$(UNITDIR)/timensd.service $(DESTDIR)$(UNITDIR)/timensd.socket $(DESTDIR)$(UNITDIR)/timensd-agent.socket
	rm -f $(DESTDIR)$(TMPFILESDIR)/timens.conf $(DESTDIR)$(SYSUSERSDIR)/timens.conf

clean:
	rm -rf build build-asan build-fuzz
