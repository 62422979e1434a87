#!/usr/bin/env bash
# make test: every test of the module, most under the race detector, then
# the few that gain nothing from it (or cannot live in it) once without.
# Every fuzz target's seed corpus runs as part of its package's tests;
# fuzzing proper is `make fuzz` (CI runs it after this).
#
# It prints a line when each step starts and ends, and a line every 30 s
# while a step runs: go test prints a package only when it ends, and the
# longest take minutes.
set -uo pipefail
GO=${GO:-go}

# Not under the race detector, run once without it instead:
# - the script tests and the judgment corpus start git-nwdes hundreds of
#   times, which under -race is the race-built test binary (minutes), and
#   they ask what nwdes answers, not whether it races;
# - the differential tests against git (merge bases, revisions, config)
#   and the long single-writer histories run one goroutine of nwdes
#   against many git processes: the detector has nothing to watch and
#   would only slow them several times over;
# - the wall's second stage runs under an address-space limit that the
#   race detector's shadow memory does not fit (the whole sandbox package
#   runs again below).
norace='^(TestScripts|TestOneJudgmentOnEverySurface|TestHistoryWalks200k|TestHeartbeatsLeaveNothingToWalk|TestMergeBaseDifferential|TestMergeBaseDifferentialSHA256|TestMergeBaseDamagedGraph|TestResolveAgreesWithGitDifferential|TestResolveAgreesWithGit|FuzzResolveAgainstGit|FuzzResolve|TestConfigReadsAsGitOnGeneratedFiles|TestALedgerAcrossBucketsVerifies|TestAnyInterleavingOfTwoClonesLosesNothing)$'
# Under the race detector at a smaller size, and again at full size
# without it: two supervisors of one clone are goroutines of one process,
# so their interleavings are worth the detector, and ten runs of them are
# the proof.
again='^(TestTwoSupervisorsInOneCloneInRemoteModeEndWithoutErrorTenTimesInTen)$'

# The tests' temporary repositories live in memory when the machine has a
# tmpfs at /dev/shm: nwdes syncs what it writes (refs, packs, records)
# and so does git, and on a virtual disk those syncs were half of the
# script tests' time. Nothing a test asserts depends on the disk: a
# crash is simulated by kill -9, which a tmpfs survives as a disk does.
# TMPDIR set by the caller wins.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	if TMPDIR=$(mktemp -d /dev/shm/nwdes-test.XXXXXX); then
		# Searchable by all, as /tmp is: tests run children as other users.
		chmod 755 "$TMPDIR"
		export TMPDIR
		trap 'rm -rf "$TMPDIR"' EXIT
		echo "== temporary files in $TMPDIR (a tmpfs)"
	else
		unset TMPDIR
	fi
fi

t0=$(date +%s)
step() {
	local name=$1
	shift
	local s
	s=$(date +%s)
	echo "== $name"
	(while sleep 30; do echo "== still: $name ($(($(date +%s) - s)) s; $(($(date +%s) - t0)) s in all)"; done) &
	local ticker=$!
	"$@"
	local rc=$?
	kill "$ticker" 2>/dev/null
	wait "$ticker" 2>/dev/null
	echo "== $name: $([ $rc -eq 0 ] && echo ok || echo FAILED) in $(($(date +%s) - s)) s"
	return $rc
}

step "gofmt" make --no-print-directory fmt || exit 1
# vet and the three test steps run side by side: vet and the two test
# steps without the race detector in the background, with their output
# kept for the end. A test spends much of its time waiting for git and the
# wall, and one step at a time left a core idle about half of the run. The race step prints as it
# goes; each background step's output follows it, whole.
bg() {
	local name=$1 log=$2
	shift 2
	(
		s=$(date +%s)
		"$@" >"$log" 2>&1
		rc=$?
		echo "== $name: $([ $rc -eq 0 ] && echo ok || echo FAILED) in $(($(date +%s) - s)) s" >>"$log"
		exit $rc
	) &
}
# Outside TMPDIR, which the tests fill and empty.
logs=$(mktemp -d /tmp/nwdes-make-test.XXXXXX)
echo "== started in the background: go vet, the script tests, the corpus, the differential and long-history tests, and the wall, without the race detector"
# With an empty build cache vet costs about a CPU-minute of type
# checking, which alone in front of the tests left the second core idle.
bg "go vet" "$logs/vet" make --no-print-directory vet
vet_pid=$!
bg "the script tests, the corpus, the differential and long-history tests, without the race detector" "$logs/norace" \
	"$GO" test -count=1 -timeout 20m -run "$norace|$again" ./gitstore/... ./cmd/git-nwdes/internal/cli/ ./ledger/ ./swarm/
norace_pid=$!
bg "the wall without the race detector (its address-space limits)" "$logs/wall" \
	"$GO" test -count=1 -timeout 10m ./sandbox/
wall_pid=$!
step "every test under the race detector, but those below" \
	"$GO" test -race -count=1 -timeout 20m -skip "$norace" ./...
race_rc=$?
step "waiting for the background steps" wait "$norace_pid"
norace_rc=$?
wait "$wall_pid"
wall_rc=$?
wait "$vet_pid"
vet_rc=$?
cat "$logs/vet" "$logs/norace" "$logs/wall"
rm -rf "$logs"
if [ $race_rc -ne 0 ] || [ $norace_rc -ne 0 ] || [ $wall_rc -ne 0 ] || [ $vet_rc -ne 0 ]; then
	echo "== make test: FAILED in $(($(date +%s) - t0)) s"
	exit 1
fi
echo "== make test: ok in $(($(date +%s) - t0)) s"
