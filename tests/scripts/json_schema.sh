#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The JSON of xfskit-repair --json and xfskit-db -j against the schemas
# in doc/ (python3-jsonschema, draft 2020-12): real output of a clean
# image, an image corrupted with xfs_db -x, a kernel-dirtied log and an
# operational error; each report's counts agree with its exit status;
# and documents broken on purpose are rejected, so validation can fail.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/log_lib.sh"
need_xfsprogs
python3 -c 'import jsonschema' 2>/dev/null ||
	skip "python3-jsonschema is not installed (scripts/deps installs it)"
DOC="${XK_SRCDIR:-$(dirname "$0")/../..}/doc"

# validate SCHEMA FILE [lines]: FILE is one document, or with "lines"
# one document per line.  Prints the first error; exits non-zero on any.
validate() {
	python3 - "$DOC/$1" "$2" "${3:-doc}" <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
text = open(sys.argv[2]).read()
docs = ([json.loads(l) for l in text.splitlines() if l.strip()]
        if sys.argv[3] == "lines" else [json.loads(text)])
if not docs:
    sys.exit("no document")
for d in docs:
    errs = sorted(v.iter_errors(d), key=lambda e: list(e.path))
    if errs:
        sys.exit("%s: %s" % (list(errs[0].path), errs[0].message))
PY
}

# repair_json NAME EXPECTED-STATUS ARGS...: run, validate, and check the
# document's exit_status and problem_count against the process.
repair_json() {
	local name=$1 want=$2 rc
	shift 2
	"$REPAIR" --json "$@" >"$T/$name.json" 2>"$T/$name.err"
	rc=$?
	[ "$rc" = "$want" ] ||
		fail "$name: xfskit-repair exited $rc, expected $want: $(cat "$T/$name.err")"
	if validate xfskit-repair.schema.json "$T/$name.json" 2>"$T/v.err"; then
		pass "$name: repair JSON matches the schema"
	else
		fail "$name: $(cat "$T/v.err"): $(head -c 2000 "$T/$name.json")"
	fi
	python3 - "$T/$name.json" "$rc" <<'PY' || fail "$name: report disagrees with the run"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["exit_status"] == int(sys.argv[2]), d["exit_status"]
if "problem_count" in d:
    assert d["problem_count"] == len(d["problems"])
    if d["mode"] == "check":
        assert (d["problem_count"] > 0) == (d["exit_status"] == 1)
        assert d["actions"] == [] and d["later_problems"] == []
    assert d["summary"]["actions"] == len(d["actions"])
    for p in d["problems"] + d["later_problems"]:
        assert p["pass"] <= 1 if p in d["problems"] else p["pass"] > 1, p
PY
}

img=$T/clean.img
mkfs_xfs_image "$img" 300M || fail "mkfs.xfs failed"
repair_json clean 0 -n "$img"
repair_json clean-repair 0 "$img"

# Corruptions xfs_repair -n sees: a bad AGF magic, a wrong counter.
bad=$T/bad.img
cp --sparse=always "$img" "$bad"
xfs_db -x -c 'agf 1' -c 'write -d magicnum 0x11223344' \
	-c 'sb 0' -c 'write -d icount 7' "$bad" >/dev/null 2>&1
xfs_repair -n "$bad" >/dev/null 2>&1 && fail "xfs_repair -n misses the corruption"
repair_json corrupt 1 -n "$bad"
grep -q '"crc_bad"' "$T/corrupt.json" || fail "corrupt: no problem objects"
# Repaired: the actions taken are in the document too.
cp --sparse=always "$bad" "$T/fix.img"
repair_json corrupt-repair 0 "$T/fix.img"
grep -q '"action": "ag_rebuilt"' "$T/corrupt-repair.json" ||
	fail "corrupt-repair: no actions: $(cat "$T/corrupt-repair.json")"

# An operational error: not a filesystem.
head -c 1M /dev/zero >"$T/zero.img"
repair_json zero 1 -n "$T/zero.img"

# A kernel-dirtied log, reported by -n as a finding.
workload() {
	mkdir "$1/d" && echo data >"$1/d/f" && xfs_io -c fsync "$1/d/f"
}
if [ "$(id -u)" -eq 0 ] && dirty_image "$T/dirty.img" workload; then
	repair_json dirty 1 -n "$T/dirty.img"
	grep -q '"structure": "log"' "$T/dirty.json" ||
		fail "dirty: no log finding: $(cat "$T/dirty.json")"
else
	echo "no dirty log without root: that case is skipped"
fi

# xfskit-db -j: one document per command, failing ones included.
"$DB" -r -j -c 'sb 0' -c 'print magicnum icount uuid' -c 'agf 0' -c print \
	-c 'nosuch' -c 'inode 128' -c 'print core.mode' "$img" >"$T/db.json" 2>&1
[ "$(wc -l <"$T/db.json")" = 7 ] || fail "xfskit-db -j: 7 lines expected: $(cat "$T/db.json")"
if validate xfskit-db.schema.json "$T/db.json" lines 2>"$T/v.err"; then
	pass "xfskit-db -j lines match the schema"
else
	fail "xfskit-db -j: $(cat "$T/v.err")"
fi
"$DB" -r -j -c 'sb 0' -c 'print magicnum' "$bad" >"$T/db2.json" 2>&1
validate xfskit-db.schema.json "$T/db2.json" lines 2>"$T/v.err" ||
	fail "xfskit-db -j on the corrupt image: $(cat "$T/v.err")"

# Documents broken on purpose must be rejected.
reject() {
	local schema=$1 what=$2 mode=${4:-doc}
	printf '%s\n' "$3" >"$T/broken.json"
	if validate "$schema" "$T/broken.json" "$mode" 2>/dev/null; then
		fail "$schema accepted a document with $what"
	else
		pass "$schema rejects $what"
	fi
}
good=$(cat "$T/corrupt.json")
reject xfskit-repair.schema.json "no problems array" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); del d["problems"]; print(json.dumps(d))' "$good")"
reject xfskit-repair.schema.json "a string exit status" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["exit_status"]="1"; print(json.dumps(d))' "$good")"
reject xfskit-repair.schema.json "a problem without its message" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); del d["problems"][0]["message"]; print(json.dumps(d))' "$good")"
reject xfskit-repair.schema.json "a problem flag that is not a boolean" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["problems"][0]["safe_to_preen"]=1; print(json.dumps(d))' "$good")"
fixed=$(cat "$T/corrupt-repair.json")
reject xfskit-repair.schema.json "an action without its message" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); del d["actions"][0]["message"]; print(json.dumps(d))' "$fixed")"
reject xfskit-repair.schema.json "an action path without its inode" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["actions"][0]["path"]="/x"; d["actions"][0].pop("ino",None); print(json.dumps(d))' "$fixed")"
reject xfskit-repair.schema.json "both an error and a problem count" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["error"]="x"; print(json.dumps(d))' "$good")"
reject xfskit-db.schema.json "an output line with two kinds" \
	'{"command":"x","ok":true,"fields":{},"output":[{"line":"a","error":"b"}]}' lines
reject xfskit-db.schema.json "a numeric field value" \
	'{"command":"x","ok":true,"fields":{"a":1},"output":[]}' lines
finish
