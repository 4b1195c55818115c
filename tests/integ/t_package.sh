#!/bin/sh
# The Debian package, used as an operator uses it: built from a copy of
# the tree with dpkg-buildpackage, installed with apt-get, then cmfs
# --version, the manual page, a mount through an fstab line (mount(8) ->
# mount.fuse3 -> cmfs <ini> <mountpoint> -o ...) and through the cmfs#
# form, a foreground daemon stopped with SIGTERM as systemd stops it (and
# its journal priorities), the unit checked with systemd-analyze verify,
# the bash completion, and make install/uninstall with DESTDIR.  The
# package is removed again unless it was installed before.
. "$(dirname "$0")/lib.sh"

if [ "${CMFS_BUILD:-build}" != build ]; then
	say "$NAME: skipped: the package is built once, in the plain run"
	exit 77
fi
for tool in dpkg-buildpackage dh rsync; do
	if ! command -v $tool >/dev/null 2>&1; then
		say "$NAME: skipped: no $tool (make deps installs it)"
		exit 77
	fi
done

PM=$T/pm
PSTORE=$T/pstore
SRC=$T/src
HAD=$(dpkg-query -W -f '${Status}' cmfs 2>/dev/null)
INSTALLED=
mkdir -p "$PM"
trap 'fusermount3 -uz "$PM" 2>/dev/null
	[ -n "$INSTALLED" ] && dpkg -r cmfs >/dev/null 2>&1
	cleanup' EXIT

# Wait (up to 10 s) until no process runs with configuration $1.
wait_gone() {
	i=0
	while pgrep -f -- "$1" >/dev/null 2>&1 && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	! pgrep -f -- "$1" >/dev/null 2>&1
}

# Build from a copy: dpkg-buildpackage cleans the tree it builds in.
rsync -a --exclude=/.git --exclude='/build*' --exclude=/cmfs \
	--exclude=/cmfs-data --exclude=/mnt --exclude=/debian/cmfs \
	--exclude=/debian/.debhelper "$TOP/" "$SRC/"
if (cd "$SRC" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
	dpkg-buildpackage -us -uc -b >"$T/build.log" 2>&1); then
	pass
else
	fail "dpkg-buildpackage failed"
	tail -n 30 "$T/build.log"
	finish
fi
VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
DEB=
for f in "$T"/cmfs_"$VERSION"_*.deb; do DEB=$f; done
check "the .deb is there" test -f "$DEB"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
for d in fuse3 libfuse3-3 libsqlite3-0 libzip4 libinih1 libssl3; do
	contains "it depends on $d" "$d" "$DEPENDS"
done
contains "it holds the unit" "lib/systemd/system/cmfs@.service" "$(dpkg-deb -c "$DEB")"
contains "and the manual" "usr/share/man/man8/cmfs.8.gz" "$(dpkg-deb -c "$DEB")"

# Install it.
if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$DEB" \
	>"$T/apt.log" 2>&1 || dpkg -i "$DEB" >>"$T/apt.log" 2>&1; then
	pass
	case $HAD in *"ok installed"*) ;; *) INSTALLED=1 ;; esac
else
	fail "the package does not install"
	tail -n 20 "$T/apt.log"
	finish
fi
eq "cmfs --version" "cmfs $VERSION" "$(/usr/bin/cmfs --version | cut -d' ' -f1,2)"
check "the configuration directory" test -d /etc/cmfs
if command -v man >/dev/null 2>&1 && [ -f /usr/share/man/man8/cmfs.8.gz ]; then
	contains "man cmfs" "cmfs fsck [--repair]" "$(MANWIDTH=100 man -P cat cmfs 2>/dev/null)"
else
	skip "no man(1), or manual pages left out by dpkg: man cmfs not read"
fi

# fstab: a line of type fuse.cmfs, mounted by mount(8) through mount.fuse3.
printf '[store]\npath = %s\n' "$PSTORE" >"$T/prod.ini"
printf '%s %s fuse.cmfs allow_other,nofail 0 0\n' "$T/prod.ini" "$PM" >"$T/fstab"
if mount -T "$T/fstab" "$PM" 2>"$T/mount.err"; then
	pass
else
	fail "mount through the fstab line: $(cat "$T/mount.err")"
fi
check "it is mounted" mountpoint -q "$PM"
eq "as fuse.cmfs" "fuse.cmfs" "$(findmnt -n -o FSTYPE "$PM")"
contains "with allow_other" "allow_other" "$(findmnt -n -o OPTIONS "$PM")"
check "the daemon runs with the ini as its source" pgrep -f -- "cmfs $T/prod.ini $PM"
check "mkdir an environment" mkdir "$PM/envs/prod"
check "upload a JAR" cp "$FIX/mongodb.jar" "$PM/envs/prod/artifacts/mongodb-connector.jar"
check "umount" umount "$PM"
check "the daemon exits after umount" wait_gone "$T/prod.ini"

# The old cmfs# form, with -t fuse3.
if mount -t fuse3 "cmfs#$T/prod.ini" "$PM" -o allow_other 2>"$T/mount.err"; then
	pass
else
	fail "mount -t fuse3 cmfs#...: $(cat "$T/mount.err")"
fi
check "the upload is there" cmp "$FIX/mongodb.jar" "$PM/envs/prod/artifacts/mongodb-connector.jar"
check "umount" umount "$PM"
check "the daemon exits" wait_gone "$T/prod.ini"

# A store directory as the source: the embedded defaults on that store.
if mount -t fuse.cmfs "$PSTORE" "$PM" 2>"$T/mount.err"; then
	pass
else
	fail "mount -t fuse.cmfs <store-dir>: $(cat "$T/mount.err")"
fi
check "the store's environment is there" test -d "$PM/envs/prod"
check "umount" umount "$PM"
check "the daemon exits" wait_gone "$PSTORE"

# As the unit runs it: -f; stopped with SIGTERM; journal priorities.
: >"$T/journal"
JS=$(stat -c '%d:%i' "$T/journal")
JOURNAL_STREAM=$JS /usr/bin/cmfs -f -c "$T/prod.ini" "$PM" 2>>"$T/journal" &
DPID=$!
i=0
while ! mountpoint -q "$PM" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check "cmfs -f mounts" mountpoint -q "$PM"
kill -TERM "$DPID"
if wait "$DPID"; then pass; else fail "cmfs exits non-zero on SIGTERM"; fi
check_not "SIGTERM unmounts" mountpoint -q "$PM"
eq "log lines carry their priority for journald" "<5>notice: mounted $PM (store $PSTORE)" \
	"$(head -n 1 "$T/journal")"
out=$(/usr/bin/cmfs fsck "$PSTORE" 2>&1)
eq "the store is clean after all that" 0 "$?"

# The unit.
if ! command -v systemd-analyze >/dev/null 2>&1; then
	skip "no systemd-analyze: the unit is not verified"
else
	printf '[Unit]\nDescription=probe\n[Service]\nExecStart=/bin/true\n' >"$T/probe.service"
	if ! systemd-analyze verify "$T/probe.service" >/dev/null 2>&1; then
		skip "systemd-analyze cannot run here: the unit is not verified"
	else
		# Documentation=man:cmfs(8) is checked too, unless dpkg was
		# told to leave manual pages out (minimal images).
		man=yes
		if [ ! -f /usr/share/man/man8/cmfs.8.gz ]; then
			man=no
			skip "no manual pages installed here: verify with --man=no"
		fi
		out=$(systemd-analyze verify --man=$man /lib/systemd/system/cmfs@.service 2>&1)
		eq "systemd-analyze verify cmfs@.service" "0 []" "$? [$out]"
	fi
fi
contains "the unit runs the installed binary in the foreground" \
	"ExecStart=/usr/bin/cmfs -f -c /etc/cmfs/%i.ini" "$(cat /lib/systemd/system/cmfs@.service)"

# The bash completion.
if command -v bash >/dev/null 2>&1; then
	mkdir "$T/cwd"
	touch "$T/cwd/prod.ini" "$T/cwd/x.jar"
	# complete WORDS...: what bash completes for the last word, in $T/cwd.
	complete_cmfs() {
		(cd "$T/cwd" && bash -c '. /usr/share/bash-completion/completions/cmfs
			COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cmfs
			echo "${COMPREPLY[*]}"' _ "$@")
	}
	eq "bash completion of a command" fsck "$(complete_cmfs cmfs fs)"
	eq "of -c" "prod.ini" "$(complete_cmfs cmfs -c p)"
	eq "of -o options" "allow_other,auto_unmount" "$(complete_cmfs cmfs -o allow_other,auto_u)"
	eq "of fsck's option" "--repair" "$(complete_cmfs cmfs fsck --r)"
	eq "of inspect's file" "x.jar" "$(complete_cmfs cmfs inspect x)"
else
	skip "no bash for the completion"
fi

# make install / uninstall with PREFIX and DESTDIR (in the built copy).
make -C "$SRC" -s install DESTDIR="$T/root" PREFIX=/opt/cmfs >"$T/install.log" 2>&1
eq "make install" 0 "$?"
for f in bin/cmfs share/man/man8/cmfs.8 share/doc/cmfs/cmfs.ini.example \
	share/doc/cmfs/examples/fstab.example lib/systemd/system/cmfs@.service \
	share/bash-completion/completions/cmfs; do
	check "installs $f" test -f "$T/root/opt/cmfs/$f"
done
contains "the unit points at PREFIX" "ExecStart=/opt/cmfs/bin/cmfs -f" \
	"$(cat "$T/root/opt/cmfs/lib/systemd/system/cmfs@.service")"
make -C "$SRC" -s uninstall DESTDIR="$T/root" PREFIX=/opt/cmfs >>"$T/install.log" 2>&1
eq "make uninstall leaves no file" "" "$(find "$T/root" -type f)"

# Remove the package again (unless it was there before).
if [ -n "$INSTALLED" ]; then
	check "the package removes" dpkg -r cmfs
	INSTALLED=
	check_not "and /usr/bin/cmfs is gone" test -e /usr/bin/cmfs
fi
finish
