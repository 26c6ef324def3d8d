#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-uninstall.sh — `make uninstall` removes exactly the files `make
# install` wrote (its manifest, dist/install.sh), and a path variable with
# whitespace is refused before anything is written or removed:
#   * a site's DOCDIR/SITE-NOTES.md and man1/gdrtrace-site-wrapper.1 stay
#     (`rm -rf DOCDIR` and the gdrtrace-*.1 glob took them);
#   * DOCDIR with a space: refused, the folder named by its first word stays
#     (unquoted, `rm -rf` removed it);
#   * DESTDIR with a space: refused, nothing staged and nothing left in the
#     source tree;
#   * no manifest (an older install): the files of this tree by name only.
set -u
. "$(dirname "$0")/../reader/lib.sh"
tmp=$T
san=${BUILD#build/}
[ "$san" = default ] && san=
mk() { make --no-print-directory SAN="$san" BUILD="$BUILD" PREFIX=/usr/local "$@"; }

st=$tmp/stage
p=$st/usr/local
mk install DESTDIR="$st" >"$tmp/i.log" 2>&1 || { cat "$tmp/i.log"; echo "FAIL: make install"; exit 1; }
[ -f "$p/libexec/gdrtrace/install-manifest" ] && pass "install writes its manifest" ||
    fail "no $p/libexec/gdrtrace/install-manifest"
# every line of the manifest is a file install wrote, and every file is a line
diff <(sed "s|^|$st|" "$p/libexec/gdrtrace/install-manifest" | sort) <(find "$st" ! -type d | sort) >"$tmp/d" &&
    pass "the manifest lists exactly the files installed" || fail "manifest vs files: $(cat "$tmp/d")"
echo "site notes" >"$p/share/doc/gdrtrace/SITE-NOTES.md"
echo ".TH SITE 1" >"$p/share/man/man1/gdrtrace-site-wrapper.1"
mk uninstall DESTDIR="$st" >"$tmp/u.log" 2>&1 || { cat "$tmp/u.log"; fail "make uninstall"; }
left=$(cd "$st" && find . ! -type d | sort | tr '\n' ' ')
[ "$left" = "./usr/local/share/doc/gdrtrace/SITE-NOTES.md ./usr/local/share/man/man1/gdrtrace-site-wrapper.1 " ] &&
    pass "uninstall keeps a site's DOCDIR/SITE-NOTES.md and gdrtrace-site-wrapper.1, removes the rest" ||
    fail "uninstall left '$left'"

# DOCDIR with a space: the first word is another folder that must survive.
st2=$tmp/stage2
mkdir -p "$st2/usr/local/share/doc/site"
echo keep >"$st2/usr/local/share/doc/site/keep"
for t in install uninstall; do
    mk "$t" DESTDIR="$st2" DOCDIR="/usr/local/share/doc/site y" >"$tmp/s.log" 2>&1
    rc=$?
    [ $rc -ne 0 ] && grep -q "DOCDIR=.*whitespace.*refused" "$tmp/s.log" &&
        [ -f "$st2/usr/local/share/doc/site/keep" ] && [ ! -e "$st2/usr/local/bin" ] &&
        pass "$t DOCDIR with a space: refused, the other folder kept" ||
        fail "$t DOCDIR='/usr/local/share/doc/site y': exit $rc, $(tail -n 3 "$tmp/s.log"); left: $(find "$st2" | head)"
done

# DESTDIR with a space: refused; nothing created, nothing in the source tree.
# (split by the shell, its second word was a folder relative to the source tree)
word=gdrtrace-destdir-word.$$
[ ! -e "$word" ] || fail "$word exists in the source tree before the test"
mk install DESTDIR="$tmp/a $word" >"$tmp/sp.log" 2>&1
rc=$?
planted=$([ -e "$word" ] && find "$word" | head -n 3)
rm -rf "$word"
[ $rc -ne 0 ] && grep -q "DESTDIR=.*whitespace.*refused" "$tmp/sp.log" && [ ! -e "$tmp/a $word" ] &&
    [ ! -e "$tmp/a" ] && [ -z "$planted" ] &&
    pass "install DESTDIR with a space: refused, nothing written" ||
    fail "install DESTDIR='$tmp/a $word': exit $rc, $(tail -n 2 "$tmp/sp.log"); in the source tree: $planted"

# No manifest: the files this tree installs, by name; the site's stay.
st3=$tmp/stage3
mk install DESTDIR="$st3" >/dev/null 2>&1 || fail "make install DESTDIR=$st3"
rm -f "$st3/usr/local/libexec/gdrtrace/install-manifest"
echo "site notes" >"$st3/usr/local/share/doc/gdrtrace/SITE-NOTES.md"
mk uninstall DESTDIR="$st3" >"$tmp/u3.log" 2>&1
left=$(cd "$st3" && find . ! -type d | sort | tr '\n' ' ')
[ "$left" = "./usr/local/share/doc/gdrtrace/SITE-NOTES.md " ] && grep -q "no .*install-manifest" "$tmp/u3.log" &&
    pass "uninstall without a manifest removes this tree's files by name, says so" ||
    fail "uninstall without manifest left '$left': $(cat "$tmp/u3.log")"

finish "make uninstall removes exactly what install wrote"
