# vdso-patch/vdso.mk — our x86-64 vDSO image, included by the top Makefile
# right after LIB_OBJS is set:
#
#   vdso-patch/arch/x86_64/vdso.c + vdso.lds
#     -> $(BUILDDIR)/vdso-patch/timens-vdso.so.dbg   (freestanding, linked at 0)
#     -> $(BUILDDIR)/vdso-patch/timens-vdso.so       (stripped)
#     -> check-vdso -o vdso-image.c                   (refuses a bad image)
#     -> $(BUILDDIR)/vdso-patch/vdso-image.o         (appended to LIB_OBJS)
#
# The image is built with its own flags, never with $(CFLAGS) or the
# sanitizer flags: it runs inside other programs, with no runtime of ours
# under it (the kernel's arch/x86/entry/vdso/Makefile turns KASAN, UBSAN,
# KCOV and stack protection off for the same reason). check-vdso is host
# code and gets the normal flags, ASan included when ASAN=1.

# These rules come before the Makefile's `all`: keep it the default goal.
VDSO_SAVED_DEFAULT_GOAL := $(.DEFAULT_GOAL)

OBJCOPY ?= objcopy

VDSO_ARCH := x86_64
VDSO_SRCDIR := vdso-patch/arch/$(VDSO_ARCH)
VDSO_OUT := $(BUILDDIR)/vdso-patch
VDSO_LDS := $(VDSO_SRCDIR)/vdso.lds
VDSO_OBJS := $(patsubst $(VDSO_SRCDIR)/%.c,$(VDSO_OUT)/%.o,$(wildcard $(VDSO_SRCDIR)/*.c)) \
	$(patsubst $(VDSO_SRCDIR)/%.S,$(VDSO_OUT)/%.o,$(wildcard $(VDSO_SRCDIR)/*.S))
VDSO_DBG := $(VDSO_OUT)/timens-vdso.so.dbg
VDSO_SO := $(VDSO_OUT)/timens-vdso.so
VDSO_CHECK := $(VDSO_OUT)/check-vdso
VDSO_IMAGE_C := $(VDSO_OUT)/vdso-image.c
VDSO_IMAGE_O := $(VDSO_OUT)/vdso-image.o

LIB_OBJS += $(VDSO_IMAGE_O)

# Freestanding, position-independent, no stack protector (there is no
# canary to read: no TLS of ours), no CET notes (the kernel's code we call
# is not IBT-marked either), hidden by default (only what vdso.lds exports
# is visible), no SSE (as the kernel's vDSO: callers such as Go assume
# nothing of the vector state, and a small frame), frame pointers kept and
# sibling calls made, as the kernel's vDSO Makefile does, and a hard cap
# on the frame because Go calls the vDSO on a small stack.
VDSO_CFLAGS := -std=gnu11 -O2 -g $(WARNINGS) -Wframe-larger-than=128 \
	-nostdlib -ffreestanding -fno-builtin -fPIC -mcmodel=small -fno-plt \
	-fno-stack-protector -fcf-protection=none -fvisibility=hidden \
	-mgeneral-regs-only -fno-omit-frame-pointer -foptimize-sibling-calls \
	-fasynchronous-unwind-tables -fno-common -Ilib/core

# --orphan-handling=error: every section must be placed by vdso.lds;
# -z text: a text relocation is an error, not a warning.
VDSO_LDFLAGS := -nostdlib -shared -Wl,-T,$(VDSO_LDS) -Wl,-soname,linux-vdso.so.1 \
	-Wl,--hash-style=both -Wl,--eh-frame-hdr -Wl,-Bsymbolic -Wl,--no-undefined \
	-Wl,-z,max-page-size=4096 -Wl,-z,noexecstack -Wl,-z,text \
	-Wl,--build-id=sha1 -Wl,--orphan-handling=error

VDSO_DEPS := lib/core/offsets-page.h lib/core/vvar-layout.h $(wildcard $(VDSO_SRCDIR)/*.h) vdso-patch/vdso.mk

$(VDSO_OUT)/%.o: $(VDSO_SRCDIR)/%.c $(VDSO_DEPS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  VDSOCC  $<")
	$(Q)$(CC) $(VDSO_CFLAGS) -c -o $@ $<

$(VDSO_OUT)/%.o: $(VDSO_SRCDIR)/%.S $(VDSO_DEPS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  VDSOAS  $<")
	$(Q)$(CC) $(VDSO_CFLAGS) -c -o $@ $<

$(VDSO_DBG): $(VDSO_OBJS) $(VDSO_LDS)
	@$(if $(Q),echo "  VDSOLD  $@")
	$(Q)$(CC) $(VDSO_LDFLAGS) -o $@ $(VDSO_OBJS)

$(VDSO_SO): $(VDSO_DBG)
	@$(if $(Q),echo "  OBJCOPY $@")
	$(Q)$(OBJCOPY) -S $< $@

# The checker is host code: built like the tests, linked with the same
# reader the injector uses (not through libtimens.a, which contains the
# image it is about to check).
$(VDSO_CHECK): vdso-patch/check-vdso.c $(BUILDDIR)/lib/core/vdso-elf.o lib/core/vdso-elf.h lib/core/util.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib/core $(ALL_LDFLAGS) -o $@ $< $(BUILDDIR)/lib/core/vdso-elf.o

# Checks the image (any violation fails the build) and writes it as C.
$(VDSO_IMAGE_C): $(VDSO_SO) $(VDSO_CHECK)
	@$(if $(Q),echo "  CHECK   $<")
	$(Q)$(VDSO_CHECK) -o $@ $<

$(VDSO_IMAGE_O): $(VDSO_IMAGE_C) lib/kernel/vdso-image.h
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib/core -Ilib/kernel -fvisibility=hidden -c -o $@ $<

.PHONY: vdso
vdso: $(VDSO_IMAGE_O)

.DEFAULT_GOAL := $(VDSO_SAVED_DEFAULT_GOAL)
